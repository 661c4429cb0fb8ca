import { shownIn } from './message-visibility';
import { ThreadReplyFields } from './message.events';

/** A reply shown in its thread alone, not in its room (`shownIn`, message-visibility.ts). */
export const threadOnly = (data: ThreadReplyFields): boolean => !shownIn(data, 'room');

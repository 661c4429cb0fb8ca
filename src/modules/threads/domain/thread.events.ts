import { DomainEvent } from '../../../shared/domain/event';

/**
 * A user's read cursor in one thread moved to `position` (a reply id: every reply up to it is
 * read), on the stream of that user's cursor in that thread (`threadcursor-<instance>.<parent>.<user>`).
 * `room_created_at`: the incarnation of the room. Ids and times only: nothing personal to seal.
 */
export type ThreadReadCursorSet = DomainEvent<
  'ThreadReadCursorSet',
  { room_id: string; room_created_at: string; parent_id: number; user_id: string; position: number; updated_at: string }
>;

export type ThreadEvent = ThreadReadCursorSet;

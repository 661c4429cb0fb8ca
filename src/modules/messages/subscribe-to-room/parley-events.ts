import { parseEventFamilies } from '../../../shared/subscriptions/parley-events';

/**
 * The families of Parley's own live events a room subscription may ask for with
 * `?parley_events=<family>,…`. A subscription that does not ask receives Chatkit's events only:
 * the original Android SDK (chatkit-android's `RoomSubscriptionEventParser`) answers an event
 * name it does not know with a parse failure that pusher-platform-android hands to the
 * subscription's error path, so those events are never sent unasked. (chatkit-client 1.14.1
 * and chatkit-swift ignore unknown names; the Android SDK is the strict one.) The user
 * subscription has its own families (`USER_PARLEY_EVENT_FAMILIES`).
 *
 * - `edits`: `message_updated` with the message as the subscription's API version shows it.
 * - `reactions`: `reaction_added` and `reaction_removed` (`{message_id, type, user_id}`, and `created_at` when added).
 * - `pins`: `message_pinned` (`{message_id, pinned_by?, pinned_at, until?}`) and `message_unpinned` (`{message_id}`).
 * - `threads`: `reply_added` (`{parent_id, message}`, the reply as the subscription's API version
 *   shows it, whether or not it also shows in the room), `reply_updated` (the same, edited) and
 *   `reply_deleted` (`{message_id, parent_id}`).
 */
export const PARLEY_EVENT_FAMILIES = ['edits', 'reactions', 'pins', 'threads'] as const;
export type ParleyEventFamily = (typeof PARLEY_EVENT_FAMILIES)[number];

export const parseParleyEvents = (raw: string | null): ReadonlySet<ParleyEventFamily> => parseEventFamilies(raw, PARLEY_EVENT_FAMILIES);

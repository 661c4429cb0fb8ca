import { parseEventFamilies } from '../../../shared/subscriptions/parley-events';
import { ChatApiVersion } from '../../../shared/http/chatkit-route';

/**
 * The families of Parley's own live events a v6 user subscription may ask for with
 * `?parley_events=<family>,…` (none unless asked: chatkit-android's `UserSubscriptionEventParser`
 * fails on an event name it does not know, as its room parser does; chatkit-client 1.14.1 and
 * chatkit-swift ignore them). v2 user subscriptions know none: they get nothing new.
 *
 * - `mutes`: `user_muted` (`{user_id, muted_at}`) and `user_unmuted` (`{user_id}`) as the
 *   subscriber's mutes change, from any device or an su token; `user_unmuted` too when a user they
 *   muted is deleted (the mute goes with them), so the client's list stays what `initial_state`
 *   and `GET …/users/:u/mutes` would show.
 */
export const USER_PARLEY_EVENT_FAMILIES = ['mutes'] as const;
export type UserParleyEventFamily = (typeof USER_PARLEY_EVENT_FAMILIES)[number];

export const parseUserParleyEvents = (raw: string | null, version: ChatApiVersion): ReadonlySet<UserParleyEventFamily> =>
  parseEventFamilies<UserParleyEventFamily>(raw, version === 6 ? USER_PARLEY_EVENT_FAMILIES : []);

import { DomainEvent } from '../../../shared/domain/event';

/**
 * A user muted another for themselves, on the muter's own mutes stream (`mutes-<instance>.<user>`).
 * Both incarnations are named: a user created again with either id is another person, and
 * neither inherits the mute. Ids and times only: nothing to seal.
 */
export type UserMuted = DomainEvent<
  'UserMuted',
  { user_id: string; user_created_at: string; muted_user_id: string; muted_user_created_at: string; muted_at: string }
>;
export type UserUnmuted = DomainEvent<'UserUnmuted', { user_id: string; user_created_at: string; muted_user_id: string; unmuted_at: string }>;

export type MuteEvent = UserMuted | UserUnmuted;

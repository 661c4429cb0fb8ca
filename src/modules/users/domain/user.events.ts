import { DomainEvent } from '../../../shared/domain/event';

export type JsonObject = { [key: string]: unknown };

/**
 * `profile_key` names the data key the profile (name, avatar_url, custom_data) is sealed with in
 * the log, taken from a block made ready ahead; absent in logs written before profiles were sealed.
 */
export type UserCreated = DomainEvent<
  'UserCreated',
  { id: string; name: string; avatar_url?: string; custom_data?: JsonObject; created_at: string; profile_key?: string }
>;
/**
 * `profile_key` and `user_created_at` name the profile key and the user incarnation the change
 * belongs to (the key is that of the creation; a user created before profiles were sealed gets
 * one named after the incarnation); both absent in logs written before.
 */
export type UserUpdated = DomainEvent<
  'UserUpdated',
  { name?: string; avatar_url?: string; custom_data?: JsonObject; updated_at: string; user_created_at?: string; profile_key?: string }
>;
/** `profile_key` and `user_created_at` name what the delete destroys: the profile of the incarnation deleted (absent in logs written before). */
export type UserDeleted = DomainEvent<'UserDeleted', { deleted_at: string; user_created_at?: string; profile_key?: string }>;

export type UserEvent = UserCreated | UserUpdated | UserDeleted;

export const USER_EVENT_TYPES: UserEvent['type'][] = ['UserCreated', 'UserUpdated', 'UserDeleted'];

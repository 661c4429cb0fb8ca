import { DomainEvent } from '../../../shared/domain/event';

export type JsonObject = { [key: string]: unknown };

export type UserCreated = DomainEvent<
  'UserCreated',
  { id: string; name: string; avatar_url?: string; custom_data?: JsonObject; created_at: string }
>;
/**
 * `user_created_at` names the user incarnation (its `UserCreated.created_at`), whose profile key
 * seals the change; absent in logs written before profiles were sealed.
 */
export type UserUpdated = DomainEvent<
  'UserUpdated',
  { name?: string; avatar_url?: string; custom_data?: JsonObject; updated_at: string; user_created_at?: string }
>;
/** `user_created_at` names the incarnation deleted, whose profile key the delete destroys (absent in logs written before). */
export type UserDeleted = DomainEvent<'UserDeleted', { deleted_at: string; user_created_at?: string }>;

export type UserEvent = UserCreated | UserUpdated | UserDeleted;

export const USER_EVENT_TYPES: UserEvent['type'][] = ['UserCreated', 'UserUpdated', 'UserDeleted'];

import { DomainEvent } from '../../../shared/domain/event';

export type JsonObject = { [key: string]: unknown };

export type UserCreated = DomainEvent<
  'UserCreated',
  { id: string; name: string; avatar_url?: string; custom_data?: JsonObject; created_at: string }
>;
export type UserUpdated = DomainEvent<
  'UserUpdated',
  { name?: string; avatar_url?: string; custom_data?: JsonObject; updated_at: string }
>;
export type UserDeleted = DomainEvent<'UserDeleted', { deleted_at: string }>;

export type UserEvent = UserCreated | UserUpdated | UserDeleted;

export const USER_EVENT_TYPES: UserEvent['type'][] = ['UserCreated', 'UserUpdated', 'UserDeleted'];

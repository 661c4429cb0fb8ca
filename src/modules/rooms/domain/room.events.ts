import { DomainEvent } from '../../../shared/domain/event';

export type JsonObject = { [key: string]: unknown };

export interface RoomMember {
  readonly user_id: string;
  /** The `created_at` of the user joined, so a later user of the same id is not a member. */
  readonly user_created_at: string;
}

export type RoomCreated = DomainEvent<
  'RoomCreated',
  {
    id: string;
    name: string;
    private: boolean;
    created_by_id?: string;
    custom_data?: JsonObject;
    push_notification_title_override?: string;
    created_at: string;
  }
>;
export type RoomUpdated = DomainEvent<
  'RoomUpdated',
  {
    name?: string;
    private?: boolean;
    custom_data?: JsonObject;
    push_notification_title_override?: string | null;
    updated_at: string;
    /** The `created_at` of the room updated: names the data key its name and custom data are sealed under (absent in logs written before). */
    room_created_at?: string;
  }
>;
export type RoomDeleted = DomainEvent<'RoomDeleted', { deleted_at: string }>;
export type RoomMembersAdded = DomainEvent<'RoomMembersAdded', { members: RoomMember[]; added_at: string }>;
/**
 * `left`: the user left (the leave route) rather than being removed by someone with the
 * permission to (absent for removals, and in logs written before it was recorded).
 */
export type RoomMembersRemoved = DomainEvent<'RoomMembersRemoved', { user_ids: string[]; removed_at: string; left?: true }>;

export type RoomEvent = RoomCreated | RoomUpdated | RoomDeleted | RoomMembersAdded | RoomMembersRemoved;

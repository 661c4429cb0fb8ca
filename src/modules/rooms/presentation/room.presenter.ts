import { ChatApiVersion } from '../../../shared/http/chatkit-route';
import { RoomDocument } from '../../../../projections/rooms/rooms.projection';

export interface RoomResponse {
  id: string;
  created_by_id?: string;
  name: string;
  private: boolean;
  custom_data?: Record<string, unknown>;
  push_notification_title_override?: string;
  created_at: string;
  updated_at: string;
  last_message_at?: string;
  unread_count?: number;
  member_user_ids?: string[];
}

/**
 * v6 rooms always carry `member_user_ids` and the push title override (the server SDK's
 * tests read them); v2 rooms carry members only where the seed shows them (join, a user's
 * rooms), so `memberIds` is passed only there.
 */
export const presentRoom = (
  version: ChatApiVersion,
  room: RoomDocument,
  memberIds?: string[],
  /** Messages the viewing user has not read (rooms listed for a user). */
  unreadCount?: number,
): RoomResponse => ({
  id: room.id,
  ...(room.created_by_id !== undefined && { created_by_id: room.created_by_id }),
  name: room.name,
  private: room.private,
  ...(room.custom_data !== undefined && { custom_data: room.custom_data }),
  ...(version === 6 &&
    room.push_notification_title_override !== undefined && {
      push_notification_title_override: room.push_notification_title_override,
    }),
  created_at: room.created_at,
  updated_at: room.updated_at,
  ...(room.last_message_at !== undefined && { last_message_at: room.last_message_at }),
  ...(unreadCount !== undefined && { unread_count: unreadCount }),
  ...(memberIds !== undefined && { member_user_ids: memberIds }),
});

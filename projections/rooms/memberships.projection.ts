import { documentId, documentIdParts, parseStreamName } from '../../src/shared/domain/streams';
import type { RoomDeleted, RoomMembersAdded, RoomMembersRemoved } from '../../src/modules/rooms/domain/room.events';
import type { UserDeleted } from '../../src/modules/users/domain/user.events';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { byRoom } from '../partitioning';

export const MEMBERSHIPS = 'room_memberships';

export interface MembershipDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly user_id: string;
  readonly joined_at: string;
}

export const membershipDocumentId = (instanceId: string, roomId: string, userId: string) =>
  documentId(instanceId, roomId, userId);

/**
 * Who is in which room. A deleted room or a deleted user takes its memberships with it,
 * which is why those events select documents by field rather than by key.
 */
export const membershipsProjection: ProjectionDefinition<RoomMembersAdded | RoomMembersRemoved | RoomDeleted | UserDeleted, MembershipDocument> = {
  name: 'room_memberships',
  version: 1,
  collections: [
    {
      name: MEMBERSHIPS,
      // (…, room_id, user_id) and (…, user_id, room_id): a room's members by user id and a user's rooms by room id, paged (the console).
      indexes: [{ fields: ['instance_id', 'room_id', 'joined_at'] }, { fields: ['instance_id', 'user_id', 'room_id'] }, { fields: ['instance_id', 'room_id', 'user_id'] }],
    },
  ],
  handles: ['RoomMembersAdded', 'RoomMembersRemoved', 'RoomDeleted', 'UserDeleted'],
  partitioning: byRoom,

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    switch (event.type) {
      case 'RoomMembersAdded':
        return event.data.members.map((m) => ({
          collection: MEMBERSHIPS,
          id: membershipDocumentId(stream.instanceId, stream.id, m.user_id),
        }));
      case 'RoomMembersRemoved':
        return event.data.user_ids.map((u) => ({
          collection: MEMBERSHIPS,
          id: membershipDocumentId(stream.instanceId, stream.id, u),
        }));
      case 'RoomDeleted':
        return [{ collection: MEMBERSHIPS, where: { instance_id: stream.instanceId, room_id: stream.id } }];
      case 'UserDeleted':
        return [{ collection: MEMBERSHIPS, where: { instance_id: stream.instanceId, user_id: stream.id } }];
      default:
        return [];
    }
  },

  evolve(document, event, target) {
    if (event.type !== 'RoomMembersAdded') return null;
    if (document) return document; // already a member: keep the original join time
    const stream = parseStreamName(event.streamName)!;
    const [, , userId] = documentIdParts(target.id);
    return {
      _id: target.id,
      instance_id: stream.instanceId,
      room_id: stream.id,
      user_id: userId,
      joined_at: event.data.added_at,
    } satisfies MembershipDocument;
  },
};

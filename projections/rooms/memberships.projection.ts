import type { RecordedEvent } from '../../src/shared/domain/event';
import { documentId, documentIdParts, parseStreamName } from '../../src/shared/domain/streams';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const MEMBERSHIPS = 'room_memberships';

export interface MembershipDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly user_id: string;
  readonly joined_at: string;
}

export const membershipDocumentId = (instanceId: string, roomId: string, userId: string) =>
  documentId(instanceId, roomId, userId);

type Data = Record<string, any>;

/**
 * Who is in which room. A deleted room or a deleted user takes its memberships with it,
 * which is why those events select documents by field rather than by key.
 */
export const membershipsProjection: ProjectionDefinition = {
  name: 'room_memberships',
  version: 1,
  collections: [
    {
      name: MEMBERSHIPS,
      indexes: [{ fields: ['instance_id', 'room_id', 'joined_at'] }, { fields: ['instance_id', 'user_id'] }],
    },
  ],
  handles: ['RoomMembersAdded', 'RoomMembersRemoved', 'RoomDeleted', 'UserDeleted'],

  targets(event: RecordedEvent): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    const data = event.data as Data;
    switch (event.type) {
      case 'RoomMembersAdded':
        return data.members.map((m: { user_id: string }) => ({
          collection: MEMBERSHIPS,
          id: membershipDocumentId(stream.instanceId, stream.id, m.user_id),
        }));
      case 'RoomMembersRemoved':
        return data.user_ids.map((u: string) => ({
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
      joined_at: (event.data as Data).added_at,
    } satisfies MembershipDocument;
  },
};

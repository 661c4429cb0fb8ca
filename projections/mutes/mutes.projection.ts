import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MuteEvent } from '../../src/modules/mutes/domain/mute.events';
import type { UserDeleted } from '../../src/modules/users/domain/user.events';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const MUTES = 'mutes';

export interface MuteDocument extends Document {
  readonly instance_id: string;
  /** Who muted. */
  readonly user_id: string;
  readonly muted_user_id: string;
  readonly muted_at: string;
}

export const muteDocumentId = (instanceId: string, userId: string, mutedUserId: string) => documentId(instanceId, userId, mutedUserId);

/** Who each user muted. A user's delete takes their mutes and the mutes of them (a user created again with the id is someone else). */
export const mutesProjection: ProjectionDefinition<MuteEvent | UserDeleted, MuteDocument> = {
  name: 'mutes',
  version: 1,
  collections: [{ name: MUTES, indexes: [{ fields: ['instance_id', 'user_id', 'muted_at'] }, { fields: ['instance_id', 'muted_user_id'] }] }],
  handles: ['UserMuted', 'UserUnmuted', 'UserDeleted'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    switch (event.type) {
      case 'UserMuted':
      case 'UserUnmuted':
        return [{ collection: MUTES, id: muteDocumentId(stream.instanceId, event.data.user_id, event.data.muted_user_id) }];
      case 'UserDeleted':
        if (stream.category !== 'user') return [];
        return [
          { collection: MUTES, where: { instance_id: stream.instanceId, user_id: stream.id } },
          { collection: MUTES, where: { instance_id: stream.instanceId, muted_user_id: stream.id } },
        ];
      default:
        return [];
    }
  },

  evolve(_doc, event, target) {
    if (event.type !== 'UserMuted') return null;
    const { user_id, muted_user_id, muted_at } = event.data;
    return { _id: target.id, instance_id: parseStreamName(event.streamName)!.instanceId, user_id, muted_user_id, muted_at };
  },
};

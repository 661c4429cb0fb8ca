import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { UserEvent } from '../../src/modules/users/domain/user.events';
import type { Document, ProjectionDefinition } from '../projection';

export const USERS = 'users';

export interface UserDocument extends Document {
  readonly instance_id: string;
  readonly id: string;
  readonly name: string;
  readonly avatar_url?: string;
  readonly custom_data?: Record<string, unknown>;
  readonly created_at: string;
  readonly updated_at: string;
}

export const userDocumentId = (instanceId: string, userId: string) => documentId(instanceId, userId);

/** Users as the API returns them, listed by creation time (and by id). */
export const usersProjection: ProjectionDefinition<UserEvent, UserDocument> = {
  name: 'users',
  version: 1,
  // By id: the admin route's search by id prefix pages through it (added to a collection built
  // before, it is built when the server starts, with no rebuild).
  collections: [{ name: USERS, indexes: [{ fields: ['instance_id', 'created_at', 'id'] }, { fields: ['instance_id', 'id'] }] }],
  handles: ['UserCreated', 'UserUpdated', 'UserDeleted'],
  destroys: ['UserDeleted'],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    return stream ? [{ collection: USERS, id: userDocumentId(stream.instanceId, stream.id) }] : [];
  },

  evolve(doc, event) {
    switch (event.type) {
      case 'UserCreated': {
        const { data } = event;
        return {
          _id: '',
          instance_id: parseStreamName(event.streamName)!.instanceId,
          id: data.id,
          name: data.name,
          ...(data.avatar_url !== undefined && { avatar_url: data.avatar_url }),
          ...(data.custom_data !== undefined && { custom_data: data.custom_data }),
          created_at: data.created_at,
          updated_at: data.created_at,
        } satisfies UserDocument;
      }
      case 'UserUpdated': {
        if (!doc) return null;
        const { data } = event;
        return {
          ...doc,
          ...(data.name !== undefined && { name: data.name }),
          ...(data.avatar_url !== undefined && { avatar_url: data.avatar_url }),
          ...(data.custom_data !== undefined && { custom_data: data.custom_data }),
          updated_at: data.updated_at,
        };
      }
      case 'UserDeleted':
        return null;
      default:
        return doc;
    }
  },
};

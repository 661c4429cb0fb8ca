import { documentId, documentIdParts, parseStreamName } from '../../src/shared/domain/streams';
import type { RoomCreated, RoomDeleted, RoomUpdated } from '../../src/modules/rooms/domain/room.events';
import type { UserCreated, UserDeleted, UserUpdated } from '../../src/modules/users/domain/user.events';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const NAMES = 'names';

export type NamedKind = 'user' | 'room';

/** One user's or room's name, folded to lower case: what the admin search by name prefix pages through. */
export interface NameDocument extends Document {
  readonly instance_id: string;
  readonly kind: NamedKind;
  readonly id: string;
  readonly name_key: string;
}

/** A name as searched: case folded (`Alice` is found by `al`). */
export const nameKey = (name: string): string => name.toLowerCase();

const KIND_OF_CATEGORY: Readonly<Record<string, NamedKind>> = { user: 'user', room: 'room' };

/**
 * Users' and rooms' names by instance, kind and case-folded name, for a search by prefix that
 * reads an index, never the collection. Apart from the users and rooms read models, so their
 * documents and their versions stay as they are; a deleted user or room (or a wiped instance)
 * takes its name with it.
 */
export const namesProjection: ProjectionDefinition<UserCreated | UserUpdated | UserDeleted | RoomCreated | RoomUpdated | RoomDeleted, NameDocument> = {
  name: 'names',
  version: 1,
  collections: [{ name: NAMES, indexes: [{ fields: ['instance_id', 'kind', 'name_key', 'id'] }] }],
  handles: ['UserCreated', 'UserUpdated', 'UserDeleted', 'RoomCreated', 'RoomUpdated', 'RoomDeleted'],
  // The admin search waits for it to reach the log's head before reading
  // (src/modules/inspector/prefix-search.ts): user and room writes never wait for it.
  awaitedByReaders: true,
  destroys: ['UserDeleted', 'RoomDeleted'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    const kind = stream && KIND_OF_CATEGORY[stream.category];
    return stream && kind ? [{ collection: NAMES, id: documentId(stream.instanceId, kind, stream.id) }] : [];
  },

  evolve(doc, event, target) {
    switch (event.type) {
      case 'UserCreated':
      case 'RoomCreated': {
        const [instanceId, kind, id] = documentIdParts(target.id);
        return { _id: target.id, instance_id: instanceId, kind: kind as NamedKind, id, name_key: nameKey(event.data.name) } satisfies NameDocument;
      }
      case 'UserUpdated':
      case 'RoomUpdated':
        return doc && event.data.name !== undefined ? { ...doc, name_key: nameKey(event.data.name) } : doc;
      case 'UserDeleted':
      case 'RoomDeleted':
        return null;
      default:
        return doc;
    }
  },
};

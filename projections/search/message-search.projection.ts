import { positionMagnitude } from '../../src/shared/domain/event';
import { parseStreamName } from '../../src/shared/domain/streams';
import type { MessagePart } from '../../src/modules/messages/domain/message-parts';
import type { MessageEvent } from '../../src/modules/messages/domain/message.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import { shownTo } from '../../src/modules/messages/domain/message-visibility';
import { FACET_PREFIXES, indexedText, searchFacets } from '../../src/modules/search/domain/search-text';
import type { TextIndexSpec } from '../../src/shared/ports/read-model-store.port';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { perMessageTargets } from '../messages/messages.projection';

export const MESSAGE_SEARCH = 'message_search';

/**
 * What the store indexes of a message document: its words, its facets, and its place in the log.
 * The facets are made of the document's own fields (`facetsOf`), which a store may keep alone.
 */
export const MESSAGE_SEARCH_INDEX: TextIndexSpec = {
  field: 'body',
  facets: 'facets',
  order: 'seq',
  facetsFrom: [
    { prefix: FACET_PREFIXES.instance, fields: ['instance_id'] },
    { prefix: FACET_PREFIXES.room, fields: ['instance_id', 'room_id'] },
    { prefix: FACET_PREFIXES.sender, fields: ['instance_id', 'user_id'] },
    { token: searchFacets.attachment, when: 'has_attachment' },
  ],
};

/**
 * A message as search finds it: its words (folded, `search-text.ts`), the facets a search may
 * require (instance, room, sender, attachment), and `seq`, the log position of its sending,
 * which orders results newest first and never changes with an edit.
 */
export interface MessageSearchDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly message_id: number;
  readonly user_id: string;
  readonly created_at: string;
  readonly seq: number;
  readonly body: string;
  readonly facets: readonly string[];
  readonly has_attachment: boolean;
}

/** The words of a message: its text parts' contents (attachments and links are not text). */
const bodyOf = (parts: readonly MessagePart[]): string =>
  indexedText(
    parts
      .filter((p): p is { type: string; content: string } => 'content' in p && p.type.toLowerCase().startsWith('text/'))
      .map((p) => p.content)
      .join('\n'),
  );

const hasAttachment = (parts: readonly MessagePart[]): boolean => parts.some((p) => 'attachment' in p || 'url' in p);

const facetsOf = (instanceId: string, roomId: string, userId: string, parts: readonly MessagePart[]): string[] => [
  searchFacets.instance(instanceId),
  searchFacets.room(instanceId, roomId),
  searchFacets.sender(instanceId, userId),
  ...(hasAttachment(parts) ? [searchFacets.attachment] : []),
];

/**
 * The message search index: one document per message that is not deleted, rewritten by every
 * edit. A deletion (by its sender, by su, by an erasure), a room's deletion and an instance
 * wipe remove the document, and the store removes its words from the index with it.
 */
export const messageSearchProjection: ProjectionDefinition<MessageEvent | RoomDeleted, MessageSearchDocument> = {
  name: 'message_search',
  version: 1,
  collections: [
    {
      name: MESSAGE_SEARCH,
      indexes: [{ fields: ['instance_id', 'room_id'] }],
      text: MESSAGE_SEARCH_INDEX,
      // Kept in columns, the text once (as JSON documents, with the text stored beside them for
      // ranking, a 4–9-byte message took 473 bytes of search.sqlite). A table made as documents
      // by an earlier release is read and written as it is (the store reads its layout from it).
      // Keyed by the message's fields (its document id made of them), unique by them: the index of
      // (instance_id, room_id) is that key's own.
      columns: [
        'instance_id',
        'room_id',
        { name: 'message_id', type: 'integer' },
        'user_id',
        { name: 'created_at', type: 'time' },
        'seq',
        'body',
        { name: 'facets', type: 'json' },
        { name: 'has_attachment', type: 'boolean' },
      ],
      key: ['instance_id', 'room_id', 'message_id'],
    },
  ],
  handles: ['MessageSent', 'MessageEdited', 'MessageDeleted', 'RoomDeleted'],
  // Searches wait for it to reach the log's head before reading (src/modules/search/): sends never wait for it.
  awaitedByReaders: true,
  // Folded in large batches behind the other projections, into DATA_DIR/search.sqlite on SQLite: sends never pay for its index.
  background: { sqliteFile: 'search' },
  destroys: ['MessageEdited', 'MessageDeleted', 'RoomDeleted'],

  targets(event): Target[] {
    // Search is shared by all its callers: a message not shown to everyone is not indexed (its edits and delete then find no document either).
    return perMessageTargets(MESSAGE_SEARCH, event, (message) => !(message.type === 'MessageSent' && !shownTo(message.data, undefined)));
  },

  evolve(doc, event, target) {
    switch (event.type) {
      case 'MessageSent': {
        const stream = parseStreamName(event.streamName)!;
        const { data } = event;
        return {
          _id: target.id,
          instance_id: stream.instanceId,
          room_id: stream.id,
          message_id: data.id,
          user_id: data.user_id,
          created_at: data.created_at,
          seq: positionMagnitude(event.position),
          body: bodyOf(data.parts),
          facets: facetsOf(stream.instanceId, stream.id, data.user_id, data.parts),
          has_attachment: hasAttachment(data.parts),
        };
      }
      case 'MessageEdited':
        return (
          doc && {
            ...doc,
            body: bodyOf(event.data.parts),
            facets: facetsOf(doc.instance_id, doc.room_id, doc.user_id, event.data.parts),
            has_attachment: hasAttachment(event.data.parts),
          }
        );
      case 'MessageDeleted':
      case 'RoomDeleted':
        return null;
      default:
        return doc;
    }
  },
};

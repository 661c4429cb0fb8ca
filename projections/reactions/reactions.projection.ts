import type { RecordedEvent } from '../../src/shared/domain/event';
import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MessageDeleted, ReactionEvent } from '../../src/modules/messages/domain/message.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import { ERASED_REACTION_TYPE } from '../../src/modules/messages/domain/message.personal-data';
import { shownTo } from '../../src/modules/messages/domain/message-visibility';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { byRoom } from '../partitioning';

export const REACTIONS = 'reactions';
export const REACTION_SUMMARIES = 'reaction_summaries';
/**
 * Reactions added under a shadow ban, apart from everyone's (so that pages and summaries of
 * everyone's select on their own indexes): shown to their reactor alone, counted in no summary.
 */
export const SHADOW_REACTIONS = 'shadow_reactions';

/** How many of a message's newest reactions its summary shows. */
export const LATEST_REACTIONS = 5;

/** One user's reaction of one type to one message. */
export interface ReactionDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly message_id: number;
  readonly type: string;
  readonly user_id: string;
  readonly user_created_at: string;
  readonly created_at: string;
  /** The log position of its addition: the order the paged list of who reacted follows. */
  readonly position: string;
}

export interface LatestReaction {
  readonly type: string;
  readonly user_id: string;
  readonly created_at: string;
}

/** What a message shows of its reactions: counts per type (in the order each type first came) and the newest few. */
export interface ReactionSummaryDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly message_id: number;
  readonly counts: Readonly<Record<string, number>>;
  readonly latest: readonly LatestReaction[];
}

export const reactionDocumentId = (instanceId: string, messageId: number, type: string, userId: string, userCreatedAt: string) =>
  documentId(instanceId, String(messageId), type, userId, userCreatedAt);
export const reactionSummaryId = (instanceId: string, messageId: number) => documentId(instanceId, String(messageId));

type Folded = ReactionEvent | MessageDeleted | RoomDeleted;

const summaryAfter = (summary: ReactionSummaryDocument | null, event: RecordedEvent<ReactionEvent>, instanceId: string): ReactionSummaryDocument | null => {
  const { id, room_id, type, user_id } = event.data;
  const counts: Record<string, number> = { ...(summary?.counts ?? {}) };
  let latest = (summary?.latest ?? []).filter((r) => !(r.type === type && r.user_id === user_id));
  if (event.type === 'MessageReactionAdded') {
    counts[type] = (counts[type] ?? 0) + 1;
    latest = [{ type, user_id, created_at: event.data.created_at }, ...latest].slice(0, LATEST_REACTIONS);
  } else if (counts[type] !== undefined) {
    if (counts[type] > 1) counts[type] -= 1;
    else delete counts[type];
  }
  if (Object.keys(counts).length === 0) return null;
  return { _id: reactionSummaryId(instanceId, id), instance_id: instanceId, room_id, message_id: id, counts, latest };
};

/**
 * Reactions to messages: one document per reaction (the paged list of who reacted, and the
 * caller's own), one summary per message that has any (what fetched messages show). A message's
 * deletion and its room's take them with it; the instance wipe forgets them.
 */
export const reactionsProjection: ProjectionDefinition<Folded, ReactionDocument | ReactionSummaryDocument> = {
  name: 'reactions',
  version: 1,
  collections: [
    {
      name: REACTIONS,
      indexes: [
        { fields: ['instance_id', 'message_id', 'position'] },
        { fields: ['instance_id', 'message_id', 'type', 'position'] },
        { fields: ['instance_id', 'user_id', 'message_id'] },
        { fields: ['instance_id', 'room_id'] },
      ],
    },
    { name: REACTION_SUMMARIES, indexes: [{ fields: ['instance_id', 'message_id'] }, { fields: ['instance_id', 'room_id'] }] },
    {
      name: SHADOW_REACTIONS,
      indexes: [{ fields: ['instance_id', 'user_id', 'message_id'] }, { fields: ['instance_id', 'message_id'] }, { fields: ['instance_id', 'room_id'] }],
    },
  ],
  handles: ['MessageReactionAdded', 'MessageReactionRemoved', 'MessageDeleted', 'RoomDeleted'],
  partitioning: byRoom,
  destroys: ['MessageReactionRemoved', 'MessageDeleted', 'RoomDeleted'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    const instanceId = stream.instanceId;
    switch (event.type) {
      case 'MessageReactionAdded':
      case 'MessageReactionRemoved': {
        const { id, type, user_id, user_created_at } = event.data;
        if (!shownTo(event.data, undefined)) return [{ collection: SHADOW_REACTIONS, id: reactionDocumentId(instanceId, id, type, user_id, user_created_at) }];
        return [
          { collection: REACTIONS, id: reactionDocumentId(instanceId, id, type, user_id, user_created_at) },
          { collection: REACTION_SUMMARIES, id: reactionSummaryId(instanceId, id) },
        ];
      }
      case 'MessageDeleted':
        return [
          { collection: REACTIONS, where: { instance_id: instanceId, message_id: event.data.id } },
          { collection: REACTION_SUMMARIES, id: reactionSummaryId(instanceId, event.data.id) },
          { collection: SHADOW_REACTIONS, where: { instance_id: instanceId, message_id: event.data.id } },
        ];
      case 'RoomDeleted':
        if (stream.category !== 'room') return [];
        return [
          { collection: REACTIONS, where: { instance_id: instanceId, room_id: stream.id } },
          { collection: REACTION_SUMMARIES, where: { instance_id: instanceId, room_id: stream.id } },
          { collection: SHADOW_REACTIONS, where: { instance_id: instanceId, room_id: stream.id } },
        ];
      default:
        return [];
    }
  },

  evolve(doc, event, target) {
    if (event.type !== 'MessageReactionAdded' && event.type !== 'MessageReactionRemoved') return null;
    // Its key destroyed (the reactor's erasure): the reaction reads as no one's and counts nowhere.
    if (event.data.type === ERASED_REACTION_TYPE) return doc;
    const instanceId = parseStreamName(event.streamName)!.instanceId;
    if (target.collection === REACTION_SUMMARIES) return summaryAfter(doc as ReactionSummaryDocument | null, event, instanceId);
    if (event.type === 'MessageReactionRemoved') return null;
    const { id, room_id, type, user_id, user_created_at, created_at } = event.data;
    return { _id: target.id, instance_id: instanceId, room_id, message_id: id, type, user_id, user_created_at, created_at, position: event.position };
  },
};

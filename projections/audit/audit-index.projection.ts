import type { RecordedEvent } from '../../src/shared/domain/event';
import { parseStreamName } from '../../src/shared/domain/streams';
import { EVERY_EVENT_TYPE, type ParleyEvent } from '../events';
import type { ProjectionDefinition, Target } from '../projection';
import { type LogPointer, logPointerId } from '../../src/shared/ports/read-model-store.port';
import { byInstance } from '../partitioning';

export const AUDIT_INDEX = 'audit_index';

/**
 * One line of the audit index: where one event is in the log, under one key. Keys are
 * `user:<id>` and `key:<key_id>` for who acted (the actor view), and `room:<id>` for events
 * that concern a room but live outside its streams (ROOM_LINKED). The event itself stays in the log; the index only points at it.
 */
export type AuditIndexDocument = LogPointer;


export const actorKey = {
  user: (userId: string) => `user:${userId}`,
  key: (keyId: string) => `key:${keyId}`,
};
export const roomKey = (roomId: string) => `room:${roomId}`;

/**
 * The room an event outside the room's own streams names: its attachments' creations (their
 * later events are in the same stream), role grants in it, and its messages' edits and
 * deletions, reactions and pins (each message has a stream, each room's pins one), its bans and freezes (its restrictions stream; the index finds a room's edited messages
 * without reading all), and the reads of its messages' content through the admin route. Older logs'
 * edits and deletions, in the timeline itself, name none.
 */
const linkedRoom = (event: RecordedEvent<ParleyEvent>): string | undefined => {
  switch (event.type) {
    case 'AttachmentCreated':
    case 'UserRoleAssigned':
    case 'UserRoleRemoved':
    case 'MessageEdited':
    case 'MessageDeleted':
    case 'MessageReactionAdded':
    case 'MessageReactionRemoved':
    case 'MessagePinned':
    case 'MessageUnpinned':
    case 'ThreadReadCursorSet':
    case 'UserBanned':
    case 'UserUnbanned':
    case 'RoomFrozen':
    case 'RoomUnfrozen':
    case 'MessageContentRead':
      return event.data.room_id;
    case 'ReportFiled':
      return event.data.room_id;
    default:
      return undefined;
  }
};

/** The keys an event is indexed under: who acted, and the room it concerns from outside the room's streams. */
export const auditKeys = (event: RecordedEvent<ParleyEvent>): string[] => {
  const keys: string[] = [];
  const actor = event.metadata?.actor;
  if (typeof actor?.user_id === 'string') keys.push(actorKey.user(actor.user_id));
  if (typeof actor?.key_id === 'string') keys.push(actorKey.key(actor.key_id));
  const roomId = linkedRoom(event);
  if (typeof roomId === 'string') keys.push(roomKey(roomId));
  return keys;
};

/** A line's key, from its id (`logPointerId`: the instance, the key and the position). */
const keyOfLine = (id: string): string => (JSON.parse(id) as [string, string, string])[1];

/**
 * Where each event is, by who caused it and by the room it concerns: the audit's actor view
 * and a room's attachments and role grants, without scanning the log. Kept across an instance
 * wipe, as the log keeps what came before it.
 */
export const auditIndexProjection: ProjectionDefinition<ParleyEvent, AuditIndexDocument> = {
  name: 'audit_index',
  // 3: kept in columns (one line per event and key, the largest collection by far: as JSON
  // documents a rebuild encoded and indexed each through JSON, and they took a fifth more room).
  // 4: a line's id is its event's position and the key's place among the event's keys (the
  // instance and the key, in the id too, took 42 bytes of every short message's two lines).
  // 5: log pointers (`CollectionSpec.logPointers`): in SQLite five numbers a line, keyed by its key
  // and position, the strings kept once (386 bytes of a short message's two lines became about 40).
  version: 5,
  collections: [
    {
      name: AUDIT_INDEX,
      // Where a store keeps documents (MongoDB): what SQLite's key is.
      indexes: [{ fields: ['instance_id', 'key', 'position'] }],
      logPointers: true,
    },
  ],
  handles: EVERY_EVENT_TYPE,
  partitioning: byInstance,
  // The audit routes wait for the log's head before reading it (src/modules/audit/audit-trail.ts).
  awaitedByReaders: true,
  // No write waits for it, so it folds behind the projections they wait for, in larger batches
  // (in read-models.sqlite still): in their batch, it held every send's answer up (a quarter to
  // a third of the batch, measured: docs/benchmarks.md).
  background: {},

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    return auditKeys(event).map((key) => ({ collection: AUDIT_INDEX, id: logPointerId(stream.instanceId, key, event.position) }));
  },

  evolve(_document, event, target) {
    const stream = parseStreamName(event.streamName)!;
    const key = keyOfLine(target.id);
    return {
      _id: target.id,
      instance_id: stream.instanceId,
      key,
      position: event.position,
      stream: event.streamName,
      revision: event.revision,
      type: event.type,
    } satisfies AuditIndexDocument;
  },
};

import type { RecordedEvent } from '../src/shared/domain/event';
import { documentId, parseStreamName } from '../src/shared/domain/streams';
import type { Document, Partitioning } from './projection';

/** Stream categories whose id is a room's id (a room, its timeline, its pins). */
const ROOM_STREAMS: ReadonlySet<string> = new Set(['room', 'messages', 'pins']);

/**
 * Split by instance: every event belongs to the instance its stream names, every document to
 * its `instance_id`. Fits a projection whose documents each hold the `instance_id` of the
 * streams that change them (every projection an instance wipe forgets does).
 */
export const byInstance: Partitioning = {
  by: 'instance',
  event: (event: RecordedEvent) => parseStreamName(event.streamName)?.instanceId ?? null,
  document: (document: Document) => String(document.instance_id),
};

/**
 * Split by room: an event belongs to the room its stream is (a room, its timeline, its pins)
 * or the `room_id` it carries (a message's own stream, a cursor, a reaction); one naming no
 * room (a user's deletion, an instance wipe) is folded by every partition on its own
 * documents. Fits a projection whose documents each hold `instance_id` and `room_id` and
 * are created only by events of their room.
 */
export const byRoom: Partitioning = {
  by: 'room',
  event: (event: RecordedEvent) => {
    const stream = parseStreamName(event.streamName);
    if (!stream) return null;
    if (ROOM_STREAMS.has(stream.category)) return documentId(stream.instanceId, stream.id);
    const room = (event.data as { room_id?: unknown } | null)?.room_id;
    return typeof room === 'string' ? documentId(stream.instanceId, room) : null;
  },
  document: (document: Document) => documentId(String(document.instance_id), String(document.room_id)),
};

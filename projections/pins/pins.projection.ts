import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MessageDeleted } from '../../src/modules/messages/domain/message.events';
import type { PinEvent } from '../../src/modules/pins/domain/pin.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { byRoom } from '../partitioning';

export const PINS = 'pins';

export interface PinDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly message_id: number;
  readonly pinned_by?: string;
  readonly pinned_at: string;
  /** Absent: until unpinned. Past: no longer shown. */
  readonly until?: string;
  /** `until`, or the end of time: what reads compare with now, in the query. */
  readonly shown_until: string;
}

/** A pin without `until` stands until unpinned. */
export const FOREVER = '9999-12-31T23:59:59.999Z';

export const pinDocumentId = (instanceId: string, roomId: string, messageId: number) => documentId(instanceId, roomId, String(messageId));

/** Each room's pinned messages; a message's deletion and its room's take their pins with them. */
export const pinsProjection: ProjectionDefinition<PinEvent | MessageDeleted | RoomDeleted, PinDocument> = {
  name: 'pins',
  version: 1,
  collections: [{ name: PINS, indexes: [{ fields: ['instance_id', 'room_id', 'shown_until'] }, { fields: ['instance_id', 'message_id'] }] }],
  handles: ['MessagePinned', 'MessageUnpinned', 'MessageDeleted', 'RoomDeleted'],
  partitioning: byRoom,

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    switch (event.type) {
      case 'MessagePinned':
      case 'MessageUnpinned':
        return [{ collection: PINS, id: pinDocumentId(stream.instanceId, event.data.room_id, event.data.message_id) }];
      case 'MessageDeleted':
        return [{ collection: PINS, where: { instance_id: stream.instanceId, message_id: event.data.id } }];
      case 'RoomDeleted':
        return stream.category === 'room' ? [{ collection: PINS, where: { instance_id: stream.instanceId, room_id: stream.id } }] : [];
      default:
        return [];
    }
  },

  evolve(_doc, event, target) {
    if (event.type !== 'MessagePinned') return null;
    const { room_id, message_id, pinned_by, pinned_at, until } = event.data;
    return {
      _id: target.id,
      instance_id: parseStreamName(event.streamName)!.instanceId,
      room_id,
      message_id,
      ...(pinned_by !== undefined && { pinned_by }),
      pinned_at,
      ...(until !== undefined && { until }),
      shown_until: until ?? FOREVER,
    };
  },
};

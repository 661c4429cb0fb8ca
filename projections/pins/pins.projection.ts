import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { MessageDeleted } from '../../src/modules/messages/domain/message.events';
import { pinChangeFlags, type PinEvent } from '../../src/modules/pins/domain/pin.events';
import type { RoomDeleted } from '../../src/modules/rooms/domain/room.events';
import { shownTo } from '../../src/modules/messages/domain/message-visibility';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { byRoom } from '../partitioning';

export const PINS = 'pins';
/**
 * Pins and unpins made under a shadow ban, one per user and message, apart from everyone's
 * (whose list selects on its own index): what that user alone sees over everyone's pins.
 */
export const SHADOW_PINS = 'shadow_pins';

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

/** A user's own pin (`pinned`) or unpin of a message, made under a shadow ban. */
export interface ShadowPinDocument extends Document {
  readonly instance_id: string;
  readonly room_id: string;
  readonly message_id: number;
  readonly user_id: string;
  /** false: unpinned for this user. */
  readonly pinned: boolean;
  readonly pinned_at: string;
  readonly until?: string;
  readonly shown_until: string;
}

/** A pin without `until` stands until unpinned. */
export const FOREVER = '9999-12-31T23:59:59.999Z';

export const pinDocumentId = (instanceId: string, roomId: string, messageId: number) => documentId(instanceId, roomId, String(messageId));
export const shadowPinDocumentId = (instanceId: string, roomId: string, messageId: number, userId: string) =>
  documentId(instanceId, roomId, String(messageId), userId);

/** Each room's pinned messages; a message's deletion and its room's take their pins with them. */
export const pinsProjection: ProjectionDefinition<PinEvent | MessageDeleted | RoomDeleted, PinDocument | ShadowPinDocument> = {
  name: 'pins',
  version: 1,
  collections: [
    { name: PINS, indexes: [{ fields: ['instance_id', 'room_id', 'shown_until'] }, { fields: ['instance_id', 'message_id'] }] },
    { name: SHADOW_PINS, indexes: [{ fields: ['instance_id', 'room_id', 'user_id'] }, { fields: ['instance_id', 'message_id'] }] },
  ],
  handles: ['MessagePinned', 'MessageUnpinned', 'MessageDeleted', 'RoomDeleted'],
  partitioning: byRoom,

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    switch (event.type) {
      case 'MessagePinned':
      case 'MessageUnpinned': {
        const { room_id, message_id } = event.data;
        const { user_id } = pinChangeFlags(event);
        if (!shownTo(pinChangeFlags(event), undefined)) {
          return user_id === undefined ? [] : [{ collection: SHADOW_PINS, id: shadowPinDocumentId(stream.instanceId, room_id, message_id, user_id) }];
        }
        return [{ collection: PINS, id: pinDocumentId(stream.instanceId, room_id, message_id) }];
      }
      case 'MessageDeleted':
        return [PINS, SHADOW_PINS].map((collection) => ({ collection, where: { instance_id: stream.instanceId, message_id: event.data.id } }));
      case 'RoomDeleted':
        return stream.category === 'room' ? [PINS, SHADOW_PINS].map((collection) => ({ collection, where: { instance_id: stream.instanceId, room_id: stream.id } })) : [];
      default:
        return [];
    }
  },

  evolve(_doc, event, target) {
    const instanceId = parseStreamName(event.streamName)!.instanceId;
    if (target.collection === SHADOW_PINS) {
      if (event.type === 'MessagePinned') {
        const { room_id, message_id, pinned_by, pinned_at, until } = event.data;
        return { _id: target.id, instance_id: instanceId, room_id, message_id, user_id: pinned_by!, pinned: true, pinned_at, ...(until !== undefined && { until }), shown_until: until ?? FOREVER };
      }
      if (event.type === 'MessageUnpinned') {
        const { room_id, message_id, unpinned_by, unpinned_at } = event.data;
        return { _id: target.id, instance_id: instanceId, room_id, message_id, user_id: unpinned_by!, pinned: false, pinned_at: unpinned_at, shown_until: unpinned_at };
      }
      return null;
    }
    if (event.type !== 'MessagePinned') return null;
    const { room_id, message_id, pinned_by, pinned_at, until } = event.data;
    return {
      _id: target.id,
      instance_id: instanceId,
      room_id,
      message_id,
      ...(pinned_by !== undefined && { pinned_by }),
      pinned_at,
      ...(until !== undefined && { until }),
      shown_until: until ?? FOREVER,
    };
  },
};

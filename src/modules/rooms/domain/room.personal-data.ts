import { dataKeyIds, eventsOfStream, PersonalDataRule, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import { incarnationAt } from '../../../shared/domain/incarnations';
import { RoomCreated, RoomDeleted, RoomUpdated } from './room.events';

/** What people write about a room: its name, custom data and push notification title. */
const ROOM_FIELDS = ['name', 'custom_data', 'push_notification_title_override'] as const;

/** The room incarnation a room stream's event belongs to, by its `created_at`. */
const roomKey = (stream: string, roomCreatedAt: string | undefined) => {
  const parsed = parseStreamName(stream);
  if (!parsed || parsed.category !== 'room' || !roomCreatedAt) return null;
  return { id: dataKeyIds.room(parsed.instanceId, parsed.id, roomCreatedAt), owner: null };
};

/**
 * A room's name, custom data and push title under the key of its incarnation, made with the
 * room. Erased (the room was deleted) it reads with an empty name, as a deleted room.
 */
export const roomCreatedPersonalData: PersonalDataRule<RoomCreated> = {
  type: 'RoomCreated',
  fields: [...ROOM_FIELDS],
  erased: { name: '' },
  keyOf: (event, stream) => roomKey(stream, event.data.created_at),
};

/**
 * An update's name, custom data and push title under the same key (the room's incarnation
 * is named by `room_created_at`; updates in logs written before it are sealed by the offline rewrite, which finds it in the stream). Erased,
 * it reads as an update of nothing but what it says of privacy.
 */
export const roomUpdatedPersonalData: PersonalDataRule<RoomUpdated> = {
  type: 'RoomUpdated',
  fields: [...ROOM_FIELDS],
  erased: {},
  keyOf: (event, stream) => roomKey(stream, event.data.room_created_at),
  // An update of a log written before updates named their incarnation: the offline rewrite finds it in the stream.
  keyOfWritten: async (event, stream, history) => roomKey(stream, await incarnationAt(history, stream, 'RoomCreated', event.data.updated_at)),
};

/**
 * A deleted room's name and custom data: the key of each incarnation its stream holds
 * (`created_at` is never sealed). The sweep's bound (`createdUpTo`) leaves a later room of the
 * same id alone; earlier incarnations' keys are gone already, destroying them again is no error.
 */
export const roomDeletedShredsRoom: ShredRule<RoomDeleted> = {
  type: 'RoomDeleted',
  async destroys(_event, stream, history) {
    const ids: string[] = [];
    for await (const event of eventsOfStream(history, stream)) {
      const key = event.type === 'RoomCreated' ? roomKey(stream, (event.data as RoomCreated['data']).created_at) : null;
      if (key) ids.push(key.id);
    }
    return ids.length ? [{ ids }] : [];
  },
};

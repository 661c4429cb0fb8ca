import { parseStreamName } from '../../../shared/domain/streams';
import { dataKeyIds, PersonalDataRule, ShredRule } from '../../../shared/domain/personal-data';
import { MessageDeleted, MessageEdited, MessageSent } from './message.events';

/**
 * The room an edit or deletion belongs to: written into the event (`room_id`), or, in logs
 * written before, the timeline stream (`messages-<instance>.<room>`) that holds it.
 */
const placeOf = (event: MessageEdited | MessageDeleted, stream: string): { instanceId: string; roomId: string } | null => {
  const parsed = parseStreamName(stream);
  if (!parsed) return null;
  const roomId = event.data.room_id ?? (parsed.category === 'messages' ? parsed.id : undefined);
  return roomId === undefined ? null : { instanceId: parsed.instanceId, roomId };
};

/** A message's content (its parts: text, links, attachment names) under a key of its own, version 0. */
export const messageSentPersonalData: PersonalDataRule<MessageSent> = {
  type: 'MessageSent',
  fields: ['parts'],
  erased: { parts: [] },
  keyOf(event, stream) {
    const parsed = parseStreamName(stream);
    if (!parsed || parsed.category !== 'messages') return null;
    return {
      id: dataKeyIds.messageVersion(parsed.instanceId, parsed.id, event.data.id, 0),
      owner: dataKeyIds.owner(parsed.instanceId, event.data.user_id, event.data.user_created_at),
    };
  },
};

/**
 * An edit's content under a key of its own (the version is the edit's event id), so that the
 * text before an edit and the text after it can be destroyed apart.
 */
export const messageEditedPersonalData: PersonalDataRule<MessageEdited> = {
  type: 'MessageEdited',
  fields: ['parts'],
  erased: { parts: [] },
  keyOf(event, stream) {
    const place = placeOf(event, stream);
    if (!place) return null;
    return { id: dataKeyIds.messageVersion(place.instanceId, place.roomId, event.data.id, `edit-${event.data.updated_at}`), owner: null };
  },
};

/** A deleted message's every version (its sending and its edits) is destroyed. */
export const messageDeletedShreds: ShredRule<MessageDeleted> = {
  type: 'MessageDeleted',
  destroys(event, stream) {
    const place = placeOf(event, stream);
    return place ? [{ prefix: dataKeyIds.message(place.instanceId, place.roomId, event.data.id) }] : [];
  },
};

import { parseStreamName } from '../../../shared/domain/streams';
import { dataKeyIds, eventsOfStream, PersonalDataRule, PreparedKeysRule, ShredRule } from '../../../shared/domain/personal-data';
import { MessageDeleted, MessageEdited, MessageIdsReserved, MessageReactionAdded, MessageReactionRemoved, MessageSent } from './message.events';
import { messagesStream } from './message.decider';
import type { RoomDeleted } from '../../rooms/domain/room.events';

const instanceOf = (stream: string): string | null => parseStreamName(stream)?.instanceId ?? null;

/** Most keys one reservation makes ready: a block is a thousand ids; a larger one leaves the rest to be made at each send. */
const MAX_PREPARED = 10_000;

/**
 * A message's content (its parts: text, links, attachment names) under a key of its own,
 * version 0, owned by its sender's incarnation when the key is made at the send.
 */
export const messageSentPersonalData: PersonalDataRule<MessageSent> = {
  type: 'MessageSent',
  fields: ['parts'],
  erased: { parts: [] },
  keyOf(event, stream) {
    const instanceId = instanceOf(stream);
    if (instanceId === null) return null;
    return {
      id: dataKeyIds.messageVersion(instanceId, event.data.id, 0),
      owner: dataKeyIds.owner(instanceId, event.data.user_id, event.data.user_created_at),
    };
  },
};

/**
 * An edit's content under a key of its own (the version names the edit's time), so that the
 * text before an edit and the text after it can be destroyed apart.
 */
export const messageEditedPersonalData: PersonalDataRule<MessageEdited> = {
  type: 'MessageEdited',
  fields: ['parts'],
  erased: { parts: [] },
  keyOf(event, stream) {
    const instanceId = instanceOf(stream);
    return instanceId === null ? null : { id: dataKeyIds.messageVersion(instanceId, event.data.id, `edit-${event.data.updated_at}`), owner: null };
  },
};

/** What a reaction reads as once its key is destroyed: a type no projection or decision counts. */
export const ERASED_REACTION_TYPE = '';

/**
 * A reaction's type under a key of the message (so the message's delete, its room's and the
 * wipe destroy it) owned by the reacting user's incarnation (so their erasure destroys it): one
 * key per message and reactor, however often they react.
 */
const reactionPersonalData = <E extends MessageReactionAdded | MessageReactionRemoved>(type: E['type']): PersonalDataRule<E> => ({
  type,
  fields: ['type'],
  erased: { type: ERASED_REACTION_TYPE } as PersonalDataRule<E>['erased'],
  keyOf(event, stream) {
    const instanceId = instanceOf(stream);
    if (instanceId === null) return null;
    const { id, user_id, user_created_at } = event.data;
    return {
      id: dataKeyIds.messageVersion(instanceId, id, `reactions-${user_id}@${user_created_at}`),
      owner: dataKeyIds.owner(instanceId, user_id, user_created_at),
    };
  },
});
export const messageReactionAddedPersonalData = reactionPersonalData<MessageReactionAdded>('MessageReactionAdded');
export const messageReactionRemovedPersonalData = reactionPersonalData<MessageReactionRemoved>('MessageReactionRemoved');

/** A reserved block of message ids makes the keys of their sendings ready: one durable write per block, none per send. */
export const messageIdsReservedPreparesKeys: PreparedKeysRule<MessageIdsReserved> = {
  type: 'MessageIdsReserved',
  prepares(event, stream) {
    const instanceId = instanceOf(stream);
    const { first, last } = event.data;
    if (instanceId === null || !(last >= first) || last - first >= MAX_PREPARED) return [];
    return Array.from({ length: last - first + 1 }, (_, i) => ({ id: dataKeyIds.messageVersion(instanceId, first + i, 0), owner: null }));
  },
};

/** A deleted message's every version (its sending and its edits) is destroyed. */
export const messageDeletedShreds: ShredRule<MessageDeleted> = {
  type: 'MessageDeleted',
  destroys(event, stream) {
    const instanceId = instanceOf(stream);
    return instanceId === null ? [] : [{ prefix: dataKeyIds.message(instanceId, event.data.id) }];
  },
};

/**
 * A deleted room's messages are destroyed, every version of each: their ids are read from
 * the room's timeline (ids are never sealed).
 */
export const roomDeletedShredsMessages: ShredRule<RoomDeleted> = {
  type: 'RoomDeleted',
  async destroys(_event, stream, history) {
    const parsed = parseStreamName(stream);
    if (!parsed || parsed.category !== 'room') return [];
    const timeline = messagesStream(parsed.instanceId, parsed.id);
    const prefixes: string[] = [];
    for await (const event of eventsOfStream(history, timeline)) {
      if (event.type === 'MessageSent') prefixes.push(dataKeyIds.message(parsed.instanceId, (event.data as MessageSent['data']).id));
    }
    return prefixes.length ? [{ prefixes }] : [];
  },
};

/**
 * An edit destroys the text before it: the sending's key and those of the edits before it in
 * the message's own stream (never its own: a replay of this edit leaves the current text).
 * Edits written to the timeline by logs before the message's own stream keep their keys until
 * the message's delete.
 */
export const messageEditedShredsPrevious: ShredRule<MessageEdited> = {
  type: 'MessageEdited',
  async destroys(event, stream, history) {
    const parsed = parseStreamName(stream);
    if (!parsed) return [];
    const { id, updated_at } = event.data;
    const current = dataKeyIds.messageVersion(parsed.instanceId, id, `edit-${updated_at}`);
    const previous = new Set([dataKeyIds.messageVersion(parsed.instanceId, id, 0)]);
    if (parsed.category === 'message') {
      for await (const e of eventsOfStream(history, stream)) {
        const at = e.type === 'MessageEdited' ? (e.data as MessageEdited['data']).updated_at : undefined;
        // Only edits before this one: a later edit's text is the current one.
        if (at !== undefined && at < updated_at) previous.add(dataKeyIds.messageVersion(parsed.instanceId, id, `edit-${at}`));
      }
    }
    previous.delete(current);
    return [{ ids: [...previous] }];
  },
};

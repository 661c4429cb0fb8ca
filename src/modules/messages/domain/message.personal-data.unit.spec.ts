import { MessageDeleted, MessageEdited, MessageIdsReserved, MessageSent } from './message.events';
import { messageDeletedShreds, messageEditedPersonalData, messageIdsReservedPreparesKeys, messageSentPersonalData, roomDeletedShredsMessages, messageEditedShredsPrevious } from './message.personal-data';

const sent = (id = 7): MessageSent => ({
  type: 'MessageSent',
  data: { id, user_id: 'al/ice', user_created_at: 'u1', parts: [{ type: 'text/plain', content: 'hi' }], room_created_at: 'r1', created_at: 'c' },
});
const edit: MessageEdited = { type: 'MessageEdited', data: { id: 7, room_id: 'room/1', parts: [], updated_at: '2026-01-02T00:00:00.000Z' } };
const deletion: MessageDeleted = { type: 'MessageDeleted', data: { id: 7, room_id: 'room/1', tombstone: false, deleted_at: 'd' } };
const reserved = (first: number, last: number): MessageIdsReserved => ({ type: 'MessageIdsReserved', data: { first, last } });

describe('message personal data', () => {
  it('seals a sent message under its own key (version 0), owned by its sender incarnation', () => {
    expect(messageSentPersonalData.keyOf(sent(), 'messages-acme.room/1')).toEqual({ id: 'acme/message/7/0', owner: 'acme/al%2Fice@u1' });
    expect(messageSentPersonalData.fields).toEqual(['parts']);
  });

  it('seals each edit under a key of its own, in its own stream or, in logs written before, in the timeline', () => {
    const key = 'acme/message/7/edit-2026-01-02T00%3A00%3A00.000Z';
    expect(messageEditedPersonalData.keyOf(edit, 'message-acme.7')?.id).toBe(key);
    expect(messageEditedPersonalData.keyOf(edit, 'messages-acme.room/1')?.id).toBe(key);
  });

  it('makes the sending keys of a reserved block of ids ready, one per id', () => {
    const keys = messageIdsReservedPreparesKeys.prepares(reserved(1001, 2000), 'messageids-acme');
    expect(keys).toHaveLength(1000);
    expect(keys[0]).toEqual({ id: 'acme/message/1001/0', owner: null });
    expect(keys[999].id).toBe(messageSentPersonalData.keyOf(sent(2000), 'messages-acme.r')!.id);
    expect(messageIdsReservedPreparesKeys.prepares(reserved(1, 1_000_000), 'messageids-acme')).toEqual([]);
  });

  it('destroys every version of a deleted message, and no message whose id only begins the same', async () => {
    const [selector] = await messageDeletedShreds.destroys(deletion, 'message-acme.7', { readStream: async () => [] });
    expect(selector).toEqual({ prefix: 'acme/message/7/' });
    const prefix = (selector as { prefix: string }).prefix;
    expect(messageSentPersonalData.keyOf(sent(), 'messages-acme.room/1')!.id.startsWith(prefix)).toBe(true);
    expect(messageEditedPersonalData.keyOf(edit, 'message-acme.7')!.id.startsWith(prefix)).toBe(true);
    expect(messageSentPersonalData.keyOf(sent(70), 'messages-acme.room/1')!.id.startsWith(prefix)).toBe(false);
  });

  it("destroys every message of a deleted room, read page by page from the room's timeline", async () => {
    const timeline = [...Array.from({ length: 1500 }, (_, i) => sent(i + 1)), { type: 'MessageEdited', data: {} }];
    const reads: string[] = [];
    const history = {
      readStream: async (stream: string, { fromRevision, maxCount }: { fromRevision: number; maxCount: number }) => {
        reads.push(stream);
        return timeline.slice(fromRevision, fromRevision + maxCount);
      },
    };
    const [selector] = await roomDeletedShredsMessages.destroys({ type: 'RoomDeleted', data: { deleted_at: 'd' } }, 'room-acme.r/1', history);
    expect(reads).toEqual(['messages-acme.r/1', 'messages-acme.r/1']);
    const prefixes = (selector as { prefixes: string[] }).prefixes;
    expect(prefixes).toHaveLength(1500);
    expect(prefixes[0]).toBe('acme/message/1/');
    expect(await roomDeletedShredsMessages.destroys({ type: 'RoomDeleted', data: { deleted_at: 'd' } }, 'room-acme.empty', { readStream: async () => [] })).toEqual([]);
  });

  it('destroys the text before an edit: the sending and the earlier edits, never this edit nor a later one', async () => {
    const at = (updated_at: string): MessageEdited => ({ type: 'MessageEdited', data: { id: 7, room_id: 'r', parts: [], updated_at } });
    const stream = [at('2026-01-01T00:00:01.000Z'), at('2026-01-01T00:00:02.000Z'), at('2026-01-01T00:00:03.000Z'), { type: 'MessageDeleted', data: {} }];
    const history = { readStream: async (_s: string, { fromRevision, maxCount }: { fromRevision: number; maxCount: number }) => stream.slice(fromRevision, fromRevision + maxCount) };
    expect(await messageEditedShredsPrevious.destroys(at('2026-01-01T00:00:02.000Z'), 'message-acme.7', history)).toEqual([
      { ids: ['acme/message/7/0', 'acme/message/7/edit-2026-01-01T00%3A00%3A01.000Z'] },
    ]);
    // An edit in the timeline of logs written before: the sending only.
    expect(await messageEditedShredsPrevious.destroys(at('2026-01-01T00:00:02.000Z'), 'messages-acme.r', history)).toEqual([{ ids: ['acme/message/7/0'] }]);
  });
});

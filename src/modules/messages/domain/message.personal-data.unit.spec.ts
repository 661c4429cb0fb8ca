import { MessageDeleted, MessageEdited, MessageSent } from './message.events';
import { messageDeletedShreds, messageEditedPersonalData, messageSentPersonalData } from './message.personal-data';

const sent: MessageSent = {
  type: 'MessageSent',
  data: { id: 7, user_id: 'al/ice', user_created_at: 'u1', parts: [{ type: 'text/plain', content: 'hi' }], room_created_at: 'r1', created_at: 'c' },
};
const edit = (room_id?: string): MessageEdited => ({ type: 'MessageEdited', data: { id: 7, ...(room_id && { room_id }), parts: [], updated_at: '2026-01-02T00:00:00.000Z' } });
const deletion = (room_id?: string): MessageDeleted => ({ type: 'MessageDeleted', data: { id: 7, ...(room_id && { room_id }), tombstone: false, deleted_at: 'd' } });

describe('message personal data', () => {
  it('seals a sent message under its own key (version 0), owned by its sender incarnation', () => {
    expect(messageSentPersonalData.keyOf(sent, 'messages-acme.room/1')).toEqual({ id: 'acme/message/room%2F1/7/0', owner: 'acme/al%2Fice@u1' });
    expect(messageSentPersonalData.fields).toEqual(['parts']);
  });

  it('seals each edit under a key of its own, placed by room_id or, in logs written before, by the timeline holding it', () => {
    const key = 'acme/message/room%2F1/7/edit-2026-01-02T00%3A00%3A00.000Z';
    expect(messageEditedPersonalData.keyOf(edit('room/1'), 'message-acme.7')?.id).toBe(key);
    expect(messageEditedPersonalData.keyOf(edit(), 'messages-acme.room/1')?.id).toBe(key);
    expect(messageEditedPersonalData.keyOf(edit(), 'message-acme.7')).toBeNull();
  });

  it('destroys every version of a deleted message, and no message whose id or room only begins the same', () => {
    const [selector] = messageDeletedShreds.destroys(deletion('room/1'), 'message-acme.7');
    expect(selector).toEqual({ prefix: 'acme/message/room%2F1/7/' });
    expect(messageDeletedShreds.destroys(deletion(), 'messages-acme.room/1')).toEqual([selector]);
    const prefix = (selector as { prefix: string }).prefix;
    expect(messageSentPersonalData.keyOf(sent, 'messages-acme.room/1')!.id.startsWith(prefix)).toBe(true);
    expect(messageSentPersonalData.keyOf({ ...sent, data: { ...sent.data, id: 70 } }, 'messages-acme.room/1')!.id.startsWith(prefix)).toBe(false);
    expect(messageSentPersonalData.keyOf(sent, 'messages-acme.room/1/7')!.id.startsWith(prefix)).toBe(false);
  });
});

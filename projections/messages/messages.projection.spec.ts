import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { MESSAGES, messageDocumentId, messagesProjection } from './messages.projection';

const sent = recorded('messages-acme.lobby', 'MessageSent', {
  id: 7,
  user_id: 'ann',
  parts: [{ type: 'text/plain', content: 'hello' }],
  room_created_at: 'r1',
  created_at: 't1',
});
const key = `${MESSAGES}|${messageDocumentId('acme', 'lobby', 7)}`;

describe('messages projection', () => {
  it('applies edits and deletions from the message’s own stream to its room’s document', async () => {
    const edited = recorded('message-acme.7', 'MessageEdited', {
      id: 7,
      room_id: 'lobby',
      parts: [{ type: 'text/plain', content: 'edited' }],
      updated_at: 't2',
    });
    expect((await project(messagesProjection, [sent, edited])).get(key)).toMatchObject({ parts: [{ type: 'text/plain', content: 'edited' }], updated_at: 't2' });
    const deleted = recorded('message-acme.7', 'MessageDeleted', { id: 7, room_id: 'lobby', tombstone: false, deleted_at: 't3' });
    expect((await project(messagesProjection, [sent, edited, deleted])).get(key)).toMatchObject({
      parts: [{ type: 'text/plain', content: 'DELETED' }],
      deleted_at: 't3',
      visible: false,
    });
  });

  it('still folds logs written before edits had their own streams (in the timeline, without room_id)', async () => {
    const edited = recorded('messages-acme.lobby', 'MessageEdited', { id: 7, parts: [{ type: 'text/plain', content: 'old edit' }], updated_at: 't2' });
    const deleted = recorded('messages-acme.lobby', 'MessageDeleted', { id: 7, tombstone: true, deleted_at: 't3' });
    expect((await project(messagesProjection, [sent, edited])).get(key)).toMatchObject({ parts: [{ type: 'text/plain', content: 'old edit' }] });
    expect((await project(messagesProjection, [sent, edited, deleted])).get(key)).toMatchObject({ deleted_at: 't3', tombstone: true, visible: true });
  });

  it('keeps no document for a thread-only reply (nor for its edits and deletion), one for a reply also in the room; a deleted room’s go', async () => {
    const reply = (id: number, alsoInRoom: boolean) =>
      recorded('messages-acme.lobby', 'MessageSent', {
        id,
        user_id: 'bob',
        parts: [{ type: 'text/plain', content: 'a reply' }],
        room_created_at: 'r1',
        created_at: 't2',
        parent_id: 7,
        ...(alsoInRoom && { also_in_room: true as const }),
      });
    const threadOnly = [
      reply(8, false),
      recorded('message-acme.8', 'MessageEdited', { id: 8, room_id: 'lobby', parts: [{ type: 'text/plain', content: 'edited' }], updated_at: 't3', parent_id: 7 }),
      recorded('message-acme.8', 'MessageDeleted', { id: 8, room_id: 'lobby', tombstone: true, deleted_at: 't4', parent_id: 7 }),
    ];
    const docs = await project(messagesProjection, [sent, ...threadOnly, reply(9, true)]);
    expect([...docs.keys()]).toEqual([key, `${MESSAGES}|${messageDocumentId('acme', 'lobby', 9)}`]);
    expect(docs.get(`${MESSAGES}|${messageDocumentId('acme', 'lobby', 9)}`)).toMatchObject({ parent_id: 7, visible: true });
    expect((await project(messagesProjection, [sent, reply(9, true), recorded('room-acme.lobby', 'RoomDeleted', { deleted_at: 't5' })])).size).toBe(0);
  });
});

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
});

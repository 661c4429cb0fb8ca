import { project } from '../../test/support/projection-fold';
import { messageDocumentId } from '../messages/messages.projection';
import { recorded } from '../testing';
import { searchFacets } from '../../src/modules/search/domain/search-text';
import { ALL_PROJECTIONS } from '../index';
import { MESSAGE_SEARCH, messageSearchProjection } from './message-search.projection';

const at = (m: number) => `2026-01-01T00:0${m}:00.000Z`;
const key = (room: string, id: number) => `${MESSAGE_SEARCH}|${messageDocumentId('acme', room, id)}`;
const sent = (room: string, id: number, parts: { type: string; content?: string; url?: string }[], user = 'alice') =>
  recorded(`room-acme.${room}`, 'MessageSent', { id, user_id: user, parts: parts as never, room_created_at: at(0), created_at: at(1) });

describe('message search projection', () => {
  it('indexes a message’s text parts as folded words, with its facets and the log position of its sending', async () => {
    const event = sent('r1', 7, [
      { type: 'text/plain', content: 'Café 東京' },
      { type: 'image/png', url: 'https://x.test/a.png' },
      { type: 'application/json', content: '{"secret":"not text"}' },
    ]);
    const docs = await project(messageSearchProjection, [event]);
    expect(docs.get(key('r1', 7))).toEqual({
      _id: messageDocumentId('acme', 'r1', 7),
      instance_id: 'acme',
      room_id: 'r1',
      message_id: 7,
      user_id: 'alice',
      created_at: at(1),
      seq: Number(event.position),
      body: 'cafe 東 京',
      facets: [searchFacets.instance('acme'), searchFacets.room('acme', 'r1'), searchFacets.sender('acme', 'alice'), searchFacets.attachment],
      has_attachment: true,
    });
  });

  it('re-indexes an edit by its new words, keeping its place; forgets deleted messages and a deleted room’s', async () => {
    const first = sent('r1', 1, [{ type: 'text/plain', content: 'before' }]);
    const docs = await project(messageSearchProjection, [
      first,
      sent('r1', 2, [{ type: 'text/plain', content: 'deleted' }]),
      sent('r2', 3, [{ type: 'text/plain', content: 'room goes' }]),
      recorded('message-acme.1', 'MessageEdited', { id: 1, room_id: 'r1', parts: [{ type: 'text/plain', content: 'After' }], updated_at: at(2) }),
      recorded('message-acme.2', 'MessageDeleted', { id: 2, room_id: 'r1', tombstone: true, deleted_at: at(3) }),
      recorded('room-acme.r2', 'RoomDeleted', { deleted_at: at(4) }),
      recorded('message-acme.9', 'MessageEdited', { id: 9, room_id: 'r1', parts: [{ type: 'text/plain', content: 'never sent' }], updated_at: at(5) }),
    ]);
    expect([...docs.keys()]).toEqual([key('r1', 1)]);
    expect(docs.get(key('r1', 1))).toMatchObject({ body: 'after', seq: Number(first.position), has_attachment: false });
  });

  it('forgets every message of a wiped instance, and only of that one, as Parley runs it', async () => {
    const running = ALL_PROJECTIONS.find((p) => p.name === messageSearchProjection.name)!;
    const gone = sent('r1', 1, [{ type: 'text/plain', content: 'goes' }]);
    const other = recorded('room-zeta.r1', 'MessageSent', { id: 1, user_id: 'u', parts: [{ type: 'text/plain', content: 'stays' }], room_created_at: at(0), created_at: at(1) });
    const docs = await project(running, [gone, other, recorded('wipes-acme.log', 'InstanceWiped', { wiped_at: at(2) })]);
    expect([...docs.values()].map((d) => d.instance_id)).toEqual(['zeta']);
  });

  it('indexes thread replies, thread-only ones too; keeps no document for a message sent under a shadow ban, nor for its edits', async () => {
    const reply = recorded('room-acme.r1', 'MessageSent', { id: 2, user_id: 'bob', parts: [{ type: 'text/plain', content: 'in the thread' }], room_created_at: at(0), created_at: at(1), parent_id: 1 });
    const shadowed = recorded('room-acme.r1', 'MessageSent', { id: 3, user_id: 'eve', parts: [{ type: 'text/plain', content: 'hidden' }], room_created_at: at(0), created_at: at(1), shadow: true });
    const editedShadowed = recorded('message-acme.3', 'MessageEdited', { id: 3, room_id: 'r1', parts: [{ type: 'text/plain', content: 'still hidden' }], updated_at: at(2) });
    const docs = await project(messageSearchProjection, [reply, shadowed, editedShadowed]);
    expect([...docs.keys()]).toEqual([key('r1', 2)]);
    expect(docs.get(key('r1', 2))).toMatchObject({ body: 'in the thread' });
  });
});


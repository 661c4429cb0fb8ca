import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { forgettingWipedInstances } from '../instance-wipe';
import { MAX_THREAD_PARTICIPANTS, threadsProjection } from './threads.projection';

const sent = (room: string, id: number, user: string, thread?: { parent: number; starter: string; alsoInRoom?: true }) =>
  recorded(`messages-acme.${room}`, 'MessageSent', {
    id,
    user_id: user,
    user_created_at: 'u0',
    parts: [{ type: 'text/plain', content: `m${id}` }],
    room_created_at: 'r0',
    created_at: `t${id}`,
    ...(thread && { parent_id: thread.parent, parent_user_id: thread.starter, ...(thread.alsoInRoom && { also_in_room: thread.alsoInRoom }) }),
  });
const of = (docs: Map<string, { [k: string]: unknown }>, collection: string) =>
  [...docs.entries()].filter(([key]) => key.startsWith(`${collection}|`)).map(([, doc]) => doc);

describe('threads projection', () => {
  it('keeps replies, a summary per parent and who takes part, ignoring messages that are no reply', async () => {
    const docs = await project(threadsProjection, [
      sent('r1', 1, 'ann'),
      sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }),
      sent('r1', 3, 'cat', { parent: 1, starter: 'ann', alsoInRoom: true }),
      sent('r1', 4, 'ben', { parent: 1, starter: 'ann' }),
      sent('r1', 5, 'dan'),
    ]);
    expect(of(docs, 'thread_replies').map((d) => [d.id, d.parent_id, d.also_in_room])).toEqual([
      [2, 1, undefined],
      [3, 1, true],
      [4, 1, undefined],
    ]);
    expect(of(docs, 'threads')).toEqual([
      expect.objectContaining({ room_id: 'r1', parent_id: 1, reply_count: 3, last_reply_id: 4, last_reply_at: 't4', participants: ['ann', 'ben', 'cat'] }),
    ]);
    expect(of(docs, 'thread_members').map((d) => [d.user_id, d.last_reply_id]).sort()).toEqual([
      ['ann', 4],
      ['ben', 4],
      ['cat', 4],
    ]);
  });

  it('keeps a reply sent under a shadow ban for its sender’s pages alone: no summary, no membership counts it, nor its deletion', async () => {
    const events = [sent('r1', 1, 'ann'), sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }), sent('r1', 3, 'eve', { parent: 1, starter: 'ann' })];
    const shadowed = { ...events[2], data: { ...events[2].data, shadow: true as const } };
    const docs = await project(threadsProjection, [
      events[0],
      events[1],
      shadowed,
      recorded('message-acme.3', 'MessageDeleted', { id: 3, room_id: 'r1', tombstone: false, deleted_at: 't9', parent_id: 1, shadow: true }),
    ]);
    expect(of(docs, 'thread_replies').map((d) => [d.id, d.visible, d.shadow, d.deleted_at])).toEqual([
      [2, true, undefined, undefined],
      [3, false, true, 't9'],
    ]);
    expect(of(docs, 'threads')).toEqual([expect.objectContaining({ reply_count: 1, last_reply_id: 2, participants: ['ann', 'ben'] })]);
    expect(of(docs, 'thread_members').map((d) => d.user_id).sort()).toEqual(['ann', 'ben']);
  });

  it(`names at most ${MAX_THREAD_PARTICIPANTS} participants, and counts every reply`, async () => {
    const parent = sent('r1', 1, 'ann');
    const replies = Array.from({ length: 15 }, (_, i) => sent('r1', i + 2, `u${i}`, { parent: 1, starter: 'ann' }));
    const docs = await project(threadsProjection, [parent, ...replies]);
    const [thread] = of(docs, 'threads');
    expect([thread.reply_count, (thread.participants as string[]).length]).toEqual([15, MAX_THREAD_PARTICIPANTS]);
    expect(of(docs, 'thread_members')).toHaveLength(16);
  });

  it('a deleted reply leaves the count and shows nothing of its content; an edit changes the reply; the room and the user take theirs', async () => {
    const docs = await project(threadsProjection, [
      sent('r1', 1, 'ann'),
      sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }),
      sent('r1', 3, 'cat', { parent: 1, starter: 'ann' }),
      recorded('message-acme.2', 'MessageEdited', { id: 2, room_id: 'r1', parts: [{ type: 'text/plain', content: 'edited' }], updated_at: 't9', parent_id: 1 }),
      recorded('message-acme.3', 'MessageDeleted', { id: 3, room_id: 'r1', tombstone: false, deleted_at: 't9', parent_id: 1 }),
      recorded('threadcursor-acme.1.ben', 'ThreadReadCursorSet', { room_id: 'r1', room_created_at: 'r0', parent_id: 1, user_id: 'ben', position: 2, updated_at: 't9' }),
      sent('r2', 10, 'ann'),
      sent('r2', 11, 'ben', { parent: 10, starter: 'ann' }),
    ]);
    expect(of(docs, 'threads').map((d) => [d.parent_id, d.reply_count])).toEqual([
      [1, 1],
      [10, 1],
    ]);
    const replies = of(docs, 'thread_replies');
    expect(replies.find((d) => d.id === 2)!.parts).toEqual([{ type: 'text/plain', content: 'edited' }]);
    expect(replies.find((d) => d.id === 3)).toMatchObject({ visible: false, parts: [{ type: 'text/plain', content: 'DELETED' }] });
    expect(of(docs, 'thread_cursors')).toEqual([expect.objectContaining({ user_id: 'ben', parent_id: 1, position: 2 })]);

    const after = await project(threadsProjection, [
      sent('r1', 1, 'ann'),
      sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }),
      recorded('threadcursor-acme.1.ben', 'ThreadReadCursorSet', { room_id: 'r1', room_created_at: 'r0', parent_id: 1, user_id: 'ben', position: 2, updated_at: 't9' }),
      sent('r2', 10, 'ann'),
      sent('r2', 11, 'ben', { parent: 10, starter: 'ann' }),
      recorded('room-acme.r2', 'RoomDeleted', { deleted_at: 't' }),
      recorded('user-acme.ben', 'UserDeleted', { deleted_at: 't' }),
    ]);
    expect(of(after, 'threads').map((d) => d.parent_id)).toEqual([1]);
    expect(of(after, 'thread_replies').map((d) => d.id)).toEqual([2]);
    expect(of(after, 'thread_members').map((d) => d.user_id)).toEqual(['ann']);
    expect(of(after, 'thread_cursors')).toEqual([]);
  });

  describe('a deleted reply leaves the summary the remaining replies make', () => {
    // As the runner folds it (projections/index.ts): the wipe's wrapper hands evolve its reads too.
    const registered = forgettingWipedInstances(threadsProjection);
    const deleted = (id: number, tombstone = false) =>
      recorded(`message-acme.${id}`, 'MessageDeleted', { id, room_id: 'r1', tombstone, deleted_at: 't99', parent_id: 1 });
    const thread = (docs: Map<string, { [k: string]: unknown }>) => {
      const [t] = of(docs, 'threads');
      return t && { reply_count: t.reply_count, last_reply_id: t.last_reply_id, last_reply_at: t.last_reply_at, participants: t.participants };
    };
    const members = (docs: Map<string, { [k: string]: unknown }>) =>
      of(docs, 'thread_members')
        .map((d) => [d.user_id, d.last_reply_id, d.last_reply_at])
        .sort();

    it('the newest reply deleted (v6, or a tombstone as an erasure leaves): the one before is the last, its sender leaves the participants and the members', async () => {
      for (const tombstone of [false, true]) {
        const docs = await project(registered, [
          sent('r1', 1, 'ann'),
          sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }),
          sent('r1', 3, 'cat', { parent: 1, starter: 'ann' }),
          deleted(3, tombstone),
        ]);
        expect(thread(docs)).toEqual({ reply_count: 1, last_reply_id: 2, last_reply_at: 't2', participants: ['ann', 'ben'] });
        expect(members(docs)).toEqual([
          ['ann', 2, 't2'],
          ['ben', 2, 't2'],
        ]);
      }
    });

    it('a replier with a reply left stays, in their place; the starter stays while the thread has replies', async () => {
      const docs = await project(registered, [
        sent('r1', 1, 'ann'),
        sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }),
        sent('r1', 3, 'cat', { parent: 1, starter: 'ann' }),
        sent('r1', 4, 'ben', { parent: 1, starter: 'ann' }),
        sent('r1', 5, 'ann', { parent: 1, starter: 'ann' }),
        deleted(4),
        deleted(5),
      ]);
      expect(thread(docs)).toEqual({ reply_count: 2, last_reply_id: 3, last_reply_at: 't3', participants: ['ann', 'ben', 'cat'] });
      expect(members(docs)).toEqual([
        ['ann', 3, 't3'],
        ['ben', 3, 't3'],
        ['cat', 3, 't3'],
      ]);
    });

    it(`a participant leaving makes room for the next replier within the ${MAX_THREAD_PARTICIPANTS}`, async () => {
      const parent = sent('r1', 1, 'ann');
      const replies = Array.from({ length: MAX_THREAD_PARTICIPANTS }, (_, i) => sent('r1', i + 2, `u${i}`, { parent: 1, starter: 'ann' }));
      const names = replies.map((r) => r.data.user_id);
      const before = await project(registered, [parent, ...replies]);
      expect(thread(before)!.participants).toEqual(['ann', ...names.slice(0, MAX_THREAD_PARTICIPANTS - 1)]);
      const docs = await project(registered, [parent, ...replies, deleted(2)]);
      expect(thread(docs)).toMatchObject({ reply_count: MAX_THREAD_PARTICIPANTS - 1, participants: ['ann', ...names.slice(1)] });
      expect(of(docs, 'thread_members').map((d) => d.user_id)).not.toContain('u0');
    });

    it('the last reply left deleted: no thread, no members; a new reply starts it again', async () => {
      const gone = await project(registered, [sent('r1', 1, 'ann'), sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }), deleted(2)]);
      expect([of(gone, 'threads'), of(gone, 'thread_members')]).toEqual([[], []]);
      const again = await project(registered, [
        sent('r1', 1, 'ann'),
        sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }),
        deleted(2),
        sent('r1', 3, 'cat', { parent: 1, starter: 'ann' }),
      ]);
      expect(thread(again)).toEqual({ reply_count: 1, last_reply_id: 3, last_reply_at: 't3', participants: ['ann', 'cat'] });
      expect(members(again)).toEqual([
        ['ann', 3, 't3'],
        ['cat', 3, 't3'],
      ]);
    });

    it('the same events delivered again change nothing', async () => {
      const events = [sent('r1', 1, 'ann'), sent('r1', 2, 'ben', { parent: 1, starter: 'ann' }), sent('r1', 3, 'cat', { parent: 1, starter: 'ann' }), deleted(3)];
      const docs = await project(registered, [...events, ...events.slice(1)]);
      expect(thread(docs)).toEqual({ reply_count: 1, last_reply_id: 2, last_reply_at: 't2', participants: ['ann', 'ben'] });
    });
  });
});

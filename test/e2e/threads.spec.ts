import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentsOf } from '../support/sqlite-files';
import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';
import { threadsProjection } from '../../projections/threads/threads.projection';

describe('threads (v6)', () => {
  let s: TestServer;
  let dataDir: string;
  const as = (sub: string) => s.token({ sub });
  const su = () => s.token({ su: true });
  const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
  const text = (content: string) => ({ parts: [{ type: 'text/plain', content }] });
  const send = async (room: string, content: string, user = 'ann') =>
    (await s.request('POST', s.chat(`/rooms/${room}/messages`), { body: text(content), token: as(user) })).body.message_id as number;
  const reply = (room: string, parent: number, content: string, user = 'ben', extra: object = {}) =>
    s.request('POST', s.chat(`/rooms/${room}/messages/${parent}/replies`), { body: { ...text(content), ...extra }, token: as(user) });
  const replyId = async (room: string, parent: number, content: string, user = 'ben', extra: object = {}) => {
    const answer = await reply(room, parent, content, user, extra);
    expect(answer.status).toBe(201);
    return answer.body.message_id as number;
  };
  const replies = async (room: string, parent: number, query = '', user = 'cat') => {
    const answer = await s.request('GET', s.chat(`/rooms/${room}/messages/${parent}/replies${query}`), { token: as(user) });
    expect(answer.status).toBe(200);
    return answer.body as any[];
  };
  const roomPage = async (room: string, user = 'cat') => (await s.request('GET', s.chat(`/rooms/${room}/messages`), { token: as(user) })).body as any[];
  const createRoom = async (id: string, extra: object = {}) =>
    expect((await s.request('POST', s.chat('/rooms'), { body: { id, name: id, user_ids: ['ben', 'cat'], ...extra }, token: as('ann') })).status).toBe(201);
  const expectError = async (response: Promise<{ status: number; body: any }>, status: number, reason: string) => {
    const answer = await response;
    expect([answer.status, answer.body.error]).toEqual([status, `services/chatkit/${reason}`]);
  };
  const myThreads = async (user: string, query = '') => {
    const answer = await s.request('GET', s.chat(`/users/${user}/threads${query}`), { token: as(user) });
    expect(answer.status).toBe(200);
    return answer.body as { threads: any[]; next?: string };
  };
  const setThreadCursor = (room: string, parent: number, user: string, position: number) =>
    s.request('PUT', s.chat(`/rooms/${room}/messages/${parent}/replies/read_cursors/${user}`), { body: { position }, token: as(user) });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-threads-'));
    s = await startTestServer({ dataDir });
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'dan', 'eve'].map((id) => ({ id, name: id })) } });
  });
  afterAll(async () => {
    await s.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a reply shows in its thread, not in the room; the parent carries the thread summary; also_in_room shows it in both', async () => {
    await createRoom('lobby');
    const parent = await send('lobby', 'parent');
    const first = await replyId('lobby', parent, 'first reply', 'ben');
    const second = await replyId('lobby', parent, 'second reply', 'cat');
    const shared = await replyId('lobby', parent, 'also in the room', 'ben', { also_in_room: true });
    const after = await send('lobby', 'after');

    expect((await roomPage('lobby')).map((m) => m.id)).toEqual([after, shared, parent]);
    const [, inRoom, parentShown] = await roomPage('lobby');
    expect(inRoom).toMatchObject({ id: shared, parent_id: parent, parts: [{ type: 'text/plain', content: 'also in the room' }] });
    expect(parentShown.thread).toEqual({ reply_count: 3, last_reply_at: expect.any(String), participants: ['ann', 'ben', 'cat'] });
    const single = await s.request('GET', s.chat(`/rooms/lobby/messages/${parent}`), { token: as('cat') });
    expect(single.body.thread.reply_count).toBe(3);
    // v2 shows no thread fields.
    const v2 = await s.request('GET', s.chat('/rooms/lobby/messages', 'v2'), { token: as('cat') });
    expect(v2.body.map((m: any) => m.id)).toEqual([after, shared, parent]);
    expect(v2.body.some((m: any) => 'thread' in m || 'parent_id' in m)).toBe(false);

    expect((await replies('lobby', parent)).map((m) => m.id)).toEqual([shared, second, first]);
    expect((await replies('lobby', parent, '?direction=newer&limit=2')).map((m) => m.id)).toEqual([first, second]);
    expect((await replies('lobby', parent, `?initial_id=${second}`)).map((m) => m.id)).toEqual([first]);
    expect((await replies('lobby', parent, `?initial_id=${first}&direction=newer`)).map((m) => m.id)).toEqual([second, shared]);
    expect((await replies('lobby', parent))[2]).toMatchObject({ id: first, user_id: 'ben', room_id: 'lobby', parts: [{ type: 'text/plain', content: 'first reply' }] });
    // v6 finds a thread-only reply by its id; v2 shows the room's messages only.
    const alone = await s.request('GET', s.chat(`/rooms/lobby/messages/${first}`), { token: as('cat') });
    expect([alone.status, alone.body.id, alone.body.parent_id]).toEqual([200, first, parent]);
    expect((await s.request('GET', s.chat(`/rooms/lobby/messages/${first}`, 'v2'), { token: as('cat') })).status).toBe(404);
    // A message without replies has an empty thread.
    expect(await replies('lobby', after)).toEqual([]);
  });

  it('answers bad input with a clear 4xx and stores nothing', async () => {
    await createRoom('strict');
    await createRoom('other');
    const parent = await send('strict', 'parent');
    const elsewhere = await send('other', 'elsewhere');
    const aReply = await replyId('strict', parent, 'a reply');
    await expectError(reply('strict', 999_999, 'x'), 404, 'not_found/parent_not_found');
    await expectError(reply('strict', elsewhere, 'x'), 404, 'not_found/parent_not_found');
    await expectError(reply('strict', aReply, 'x'), 422, 'unprocessable_entity/parent_is_reply');
    await expectError(reply('strict', parent, 'x', 'ben', { also_in_room: 'yes' }), 422, 'unprocessable_entity/invalid_also_in_room');
    await expectError(s.request('POST', s.chat(`/rooms/strict/messages/${parent}/replies`), { body: { parts: [] }, token: as('ben') }), 422, 'unprocessable_entity/validation_failed');
    await expectError(reply('strict', parent, 'x', 'eve'), 403, 'forbidden/not_a_member');
    const gone = await send('strict', 'gone');
    expect((await s.request('DELETE', s.chat(`/rooms/strict/messages/${gone}`), { token: as('ann') })).status).toBe(204);
    await expectError(reply('strict', gone, 'x'), 404, 'not_found/parent_not_found');
    expect((await s.request('POST', s.chat(`/rooms/strict/messages/${parent}/replies`, 'v2'), { body: text('x'), token: as('ben') })).status).toBe(404);
    await expectError(s.request('GET', s.chat(`/rooms/strict/messages/999999/replies`), { token: as('ben') }), 404, 'not_found/parent_not_found');
    await expectError(s.request('GET', s.chat(`/rooms/strict/messages/${parent}/replies?direction=up`), { token: as('ben') }), 422, 'unprocessable_entity/invalid_direction');
    expect((await replies('strict', parent)).map((m) => m.id)).toEqual([aReply]);
  });

  it('replying needs message:create and reading replies room:messages:get; a private room hides its threads from strangers', async () => {
    await createRoom('guarded');
    const parent = await send('guarded', 'x');
    expect((await s.request('POST', authz('/roles'), { body: { name: 'read-only', scope: 'global', permissions: ['room:get', 'room:messages:get'] } })).status).toBe(201);
    expect((await s.request('POST', authz('/roles'), { body: { name: 'write-only', scope: 'global', permissions: ['room:get', 'message:create'] } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/cat/roles'), { body: { name: 'read-only' } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/ben/roles'), { body: { name: 'write-only' } })).status).toBe(201);
    try {
      const refused = await reply('guarded', parent, 'no', 'cat');
      expect([refused.status, refused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
      expect(refused.body.error_description).toContain('message:create');
      await replyId('guarded', parent, 'yes', 'ben');
      const unread = await s.request('GET', s.chat(`/rooms/guarded/messages/${parent}/replies`), { token: as('ben') });
      expect([unread.status, unread.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
      expect((await replies('guarded', parent, '', 'cat')).length).toBe(1);
    } finally {
      expect((await s.request('DELETE', authz('/users/cat/roles'))).status).toBe(204);
      expect((await s.request('DELETE', authz('/users/ben/roles'))).status).toBe(204);
    }
    // su needs no membership.
    const bySu = await s.request('POST', s.chat(`/rooms/guarded/messages/${parent}/replies`), { body: text('su'), token: s.token({ su: true, sub: 'eve' }) });
    expect(bySu.status).toBe(201);

    await s.request('POST', s.chat('/rooms'), { body: { id: 'hidden', name: 'hidden', private: true, user_ids: ['ben'] }, token: as('ann') });
    const secret = await send('hidden', 'secret');
    await replyId('hidden', secret, 'secret reply');
    expect((await s.request('GET', s.chat(`/rooms/hidden/messages/${secret}/replies`), { token: as('eve') })).status).toBe(404);
    expect((await reply('hidden', secret, 'let me in', 'eve')).status).toBe(404);
    const others = await s.request('GET', s.chat('/users/ben/threads'), { token: as('eve') });
    expect(others.status).toBe(403);
    expect((await s.request('GET', s.chat('/users/ben/threads'), { token: su() })).status).toBe(200);
  });

  it("tells room subscriptions that ask (parley_events=threads) about replies live; others see only replies also in the room", async () => {
    await createRoom('live');
    const auth = { authorization: `Bearer ${as('cat')}` };
    const asking = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/live?message_limit=0&parley_events=threads')}`, auth);
    const plain = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/live?message_limit=0')}`, auth);
    try {
      const parent = await send('live', 'parent');
      for (const sub of [asking, plain]) expect((await sub.nextEvent()).body.data.id).toBe(parent);
      const hidden = await replyId('live', parent, 'thread only');
      expect((await asking.nextEvent()).body).toEqual({
        event_name: 'reply_added',
        data: { parent_id: parent, message: expect.objectContaining({ id: hidden, parent_id: parent, user_id: 'ben', parts: [{ type: 'text/plain', content: 'thread only' }] }) },
        timestamp: expect.any(String),
      });
      const shown = await replyId('live', parent, 'in both', 'ben', { also_in_room: true });
      expect((await asking.nextEvent()).body).toMatchObject({ event_name: 'reply_added', data: { parent_id: parent, message: { id: shown } } });
      expect((await asking.nextEvent()).body).toMatchObject({ event_name: 'new_message', data: { id: shown, parent_id: parent } });
      expect((await s.request('PUT', s.chat(`/rooms/live/messages/${hidden}`), { body: text('thread only, edited'), token: as('ben') })).status).toBe(204);
      expect((await asking.nextEvent()).body).toMatchObject({
        event_name: 'reply_updated',
        data: { parent_id: parent, message: { id: hidden, parent_id: parent, parts: [{ type: 'text/plain', content: 'thread only, edited' }] } },
      });
      expect((await s.request('DELETE', s.chat(`/rooms/live/messages/${hidden}`), { token: as('ben') })).status).toBe(204);
      expect((await asking.nextEvent()).body).toMatchObject({ event_name: 'reply_deleted', data: { message_id: hidden, parent_id: parent } });
      const next = await send('live', 'after');
      expect((await asking.nextEvent()).body).toMatchObject({ event_name: 'new_message', data: { id: next } });
      // The plain subscription saw neither the thread-only reply nor its deletion.
      expect((await plain.nextEvent()).body).toMatchObject({ event_name: 'new_message', data: { id: shown } });
      expect((await plain.nextEvent()).body).toMatchObject({ event_name: 'new_message', data: { id: next } });
    } finally {
      await Promise.all([asking.close(), plain.close()]);
    }
    const bad = await s.request('SUBSCRIBE', s.chat('/rooms/live?parley_events=threads,bogus'), { token: as('cat') });
    expect(bad.status).toBe(422);
  });

  it("lists a user's threads newest activity first with unread counts from per-thread read cursors; the room's unread count leaves thread-only replies out", async () => {
    await createRoom('unread', { user_ids: ['ben', 'cat', 'dan'] });
    const older = await send('unread', 'older thread', 'dan');
    const newer = await send('unread', 'newer thread', 'cat');
    expect((await s.request('PUT', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/rooms/unread/users/dan`, { body: { position: newer }, token: as('dan') })).status).toBe(201);
    const r1 = await replyId('unread', older, 'r1', 'ben');
    const r2 = await replyId('unread', older, 'r2', 'cat');
    await replyId('unread', newer, 'r3', 'dan');
    const r4 = await replyId('unread', newer, 'r4', 'ben');

    const dan = await myThreads('dan');
    expect(dan.threads.map((t) => [t.parent_id, t.reply_count, t.unread_count])).toEqual([
      [newer, 2, 2],
      [older, 2, 2],
    ]);
    expect(dan.threads[0]).toMatchObject({ room_id: 'unread', last_reply_id: r4, participants: ['cat', 'dan', 'ben'], parent: { id: newer } });
    expect((await setThreadCursor('unread', older, 'dan', r1)).status).toBe(204);
    expect((await setThreadCursor('unread', older, 'dan', 1)).status).toBe(204); // backwards: nothing changes
    const cursor = await s.request('GET', s.chat(`/rooms/unread/messages/${older}/replies/read_cursors/dan`), { token: as('dan') });
    expect(cursor.body).toEqual({ room_id: 'unread', parent_id: older, user_id: 'dan', position: r1, updated_at: expect.any(String) });
    expect((await myThreads('dan')).threads.map((t) => t.unread_count)).toEqual([2, 1]);
    expect((await setThreadCursor('unread', older, 'dan', r2)).status).toBe(204);
    expect((await myThreads('dan')).threads.map((t) => t.unread_count)).toEqual([2, 0]);
    // Activity moves a thread to the top; pages follow `next`.
    await replyId('unread', older, 'r5', 'cat');
    const first = await myThreads('dan', '?limit=1');
    expect([first.threads.map((t) => [t.parent_id, t.unread_count]), typeof first.next]).toEqual([[[older, 1]], 'string']);
    const rest = await myThreads('dan', `?limit=1&before=${first.next}`);
    expect([rest.threads.map((t) => t.parent_id), rest.next]).toEqual([[newer], undefined]);
    // ann took part in neither.
    expect((await myThreads('ann')).threads.filter((t) => t.room_id === 'unread')).toEqual([]);
    await expectError(setThreadCursor('unread', older, 'dan', -1), 422, 'unprocessable_entity/validation_failed');
    await expectError(s.request('PUT', s.chat(`/rooms/unread/messages/${older}/replies/read_cursors/dan`), { body: { position: 3 }, token: as('ben') }), 403, 'forbidden/not_allowed');

    // dan's room cursor stands at `newer`: thread-only replies after it are not unread in the room.
    const rooms = await s.request('GET', s.chat('/users/dan/rooms'), { token: as('dan') });
    expect(rooms.body.find((r: any) => r.id === 'unread').unread_count).toBe(0);
    await replyId('unread', older, 'in the room too', 'ben', { also_in_room: true });
    const after = await s.request('GET', s.chat('/users/dan/rooms'), { token: as('dan') });
    expect(after.body.find((r: any) => r.id === 'unread').unread_count).toBe(1);
  });

  it('a deleted reply leaves its thread and its count; the room takes its threads with it; the audit shows replies', async () => {
    await createRoom('fleeting');
    const parent = await send('fleeting', 'parent');
    const kept = await replyId('fleeting', parent, 'kept', 'ben');
    const gone = await replyId('fleeting', parent, 'gone', 'cat');
    expect((await s.request('DELETE', s.chat(`/rooms/fleeting/messages/${gone}`), { token: as('cat') })).status).toBe(204);
    expect((await replies('fleeting', parent)).map((m) => m.id)).toEqual([kept]);
    const shown = await s.request('GET', s.chat(`/rooms/fleeting/messages/${parent}`), { token: as('cat') });
    expect(shown.body.thread.reply_count).toBe(1);
    // A reply is a message: its sender edits it, reactions reach it.
    expect((await s.request('PUT', s.chat(`/rooms/fleeting/messages/${kept}`), { body: text('kept, edited'), token: as('ben') })).status).toBe(204);
    expect((await replies('fleeting', parent))[0].parts).toEqual([{ type: 'text/plain', content: 'kept, edited' }]);

    const audit = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/fleeting`, { token: su() });
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).toContain(String(kept));

    expect((await s.request('DELETE', s.chat('/rooms/fleeting'), { token: su() })).status).toBe(204);
    await createRoom('fleeting');
    await expectError(s.request('GET', s.chat(`/rooms/fleeting/messages/${parent}/replies`), { token: as('ben') }), 404, 'not_found/parent_not_found');
    expect((await myThreads('ben')).threads.filter((t) => t.room_id === 'fleeting')).toEqual([]);
  });

  it('every v6 route that takes a message id finds a reply shown in its thread alone; its history needs no room', async () => {
    await createRoom('aside');
    const parent = await send('aside', 'parent');
    const alone = await replyId('aside', parent, 'only in the thread', 'ben');
    const at = (rest = '') => s.chat(`/rooms/aside/messages/${alone}${rest}`);
    // Its history (the audit API) is found by its id alone, as a room's message is, before any change of its own names its room.
    const history = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/messages/${alone}`, { token: su() });
    expect([history.status, history.body.events?.map((e: any) => e.type)]).toEqual([200, ['MessageSent']]);
    // Reactions: adding one, the who-reacted list, removing one.
    expect((await s.request('PUT', at('/reactions/%F0%9F%91%8D'), { token: as('cat') })).status).toBe(204);
    const who = await s.request('GET', at('/reactions'), { token: as('ann') });
    expect([who.status, who.body.reactions]).toEqual([200, [{ type: '👍', user_id: 'cat', created_at: expect.any(String) }]]);
    expect((await s.request('GET', s.chat(`/rooms/aside/messages/${alone}`), { token: as('cat') })).body.reactions).toMatchObject({ counts: { '👍': 1 }, mine: ['👍'] });
    // Pin and unpin; report.
    expect((await s.request('PUT', at('/pin'), { token: as('cat') })).status).toBe(204);
    expect((await s.request('GET', s.chat('/rooms/aside/pins'), { token: as('ann') })).body.pins.map((p: any) => p.message_id)).toEqual([alone]);
    expect((await s.request('DELETE', at('/pin'), { token: as('cat') })).status).toBe(204);
    const reported = await s.request('POST', at('/reports'), { body: { category: 'spam' }, token: as('cat') });
    expect(reported.status).toBe(201);
    // A reply has no thread of its own (threads are one level deep): its replies and cursors answer as replying to it does.
    await expectError(reply('aside', alone, 'nested'), 422, 'unprocessable_entity/parent_is_reply');
    await expectError(s.request('GET', at('/replies'), { token: as('cat') }), 422, 'unprocessable_entity/parent_is_reply');
    await expectError(setThreadCursor('aside', alone, 'cat', alone), 422, 'unprocessable_entity/parent_is_reply');
    const shared = await replyId('aside', parent, 'in the room too', 'ben', { also_in_room: true });
    await expectError(s.request('GET', s.chat(`/rooms/aside/messages/${shared}/replies`), { token: as('cat') }), 422, 'unprocessable_entity/parent_is_reply');
    // Its sender edits and deletes it; then every route answers 404 as for any deleted message.
    expect((await s.request('PUT', at(), { body: text('edited, in the thread'), token: as('ben') })).status).toBe(204);
    expect((await s.request('GET', at(), { token: as('cat') })).body.parts).toEqual([{ type: 'text/plain', content: 'edited, in the thread' }]);
    expect((await s.request('DELETE', at(), { token: as('ben') })).status).toBe(204);
    await expectError(s.request('GET', at(), { token: as('cat') }), 404, 'not_found/message_not_found');
    await expectError(s.request('GET', at('/reactions'), { token: as('cat') }), 404, 'not_found/message_not_found');
    await expectError(s.request('PUT', at('/pin'), { token: as('cat') }), 404, 'not_found/message_not_found');
  });

  it("a deleted reply leaves the parent's summary, the threads lists and the unread counts what the remaining replies say", async () => {
    await createRoom('shrinking', { user_ids: ['ben', 'cat', 'dan'] });
    const parent = await send('shrinking', 'parent');
    const bens = await replyId('shrinking', parent, 'ben replies', 'ben');
    const cats = await replyId('shrinking', parent, 'cat replies', 'cat');
    const newest = await replyId('shrinking', parent, 'cat again', 'cat');
    const createdAt = new Map((await replies('shrinking', parent)).map((m) => [m.id as number, m.created_at as string]));
    const summary = async () => (await s.request('GET', s.chat(`/rooms/shrinking/messages/${parent}`), { token: as('dan') })).body.thread;
    const listed = async (user: string) => (await myThreads(user)).threads.find((t) => t.parent_id === parent);
    const shown = (reply_count: number, last: number, participants: string[]) => ({ reply_count, last_reply_at: createdAt.get(last), participants });
    expect(await summary()).toEqual(shown(3, newest, ['ann', 'ben', 'cat']));

    // The newest reply deleted: the one before it is the thread's last, for every member.
    expect((await s.request('DELETE', s.chat(`/rooms/shrinking/messages/${newest}`), { token: as('cat') })).status).toBe(204);
    expect(await summary()).toEqual(shown(2, cats, ['ann', 'ben', 'cat']));
    for (const user of ['ann', 'ben', 'cat']) {
      expect(await listed(user)).toMatchObject({ ...shown(2, cats, ['ann', 'ben', 'cat']), last_reply_id: cats, unread_count: 2 });
    }

    // cat's last reply deleted: cat is no longer in the thread (summary, cat's threads); ann's unread count follows.
    expect((await setThreadCursor('shrinking', parent, 'ben', bens)).status).toBe(204);
    expect((await s.request('DELETE', s.chat(`/rooms/shrinking/messages/${cats}`), { token: as('cat') })).status).toBe(204);
    expect(await summary()).toEqual(shown(1, bens, ['ann', 'ben']));
    expect(await listed('cat')).toBeUndefined();
    expect(await listed('ann')).toMatchObject({ ...shown(1, bens, ['ann', 'ben']), last_reply_id: bens, unread_count: 1 });
    expect(await listed('ben')).toMatchObject({ reply_count: 1, last_reply_id: bens, unread_count: 0 });
    const pageOfRoom = (await roomPage('shrinking', 'dan')).find((m) => m.id === parent);
    expect(pageOfRoom.thread).toEqual(shown(1, bens, ['ann', 'ben']));

    // The last reply left deleted (by su): no thread to show, to list or to count; a new reply starts it again.
    expect((await s.request('DELETE', s.chat(`/rooms/shrinking/messages/${bens}`), { token: su() })).status).toBe(204);
    expect(await summary()).toBeUndefined();
    for (const user of ['ann', 'ben', 'cat']) expect(await listed(user)).toBeUndefined();
    expect(await replies('shrinking', parent)).toEqual([]);
    const again = await replyId('shrinking', parent, 'dan starts over', 'dan');
    const againAt = (await replies('shrinking', parent))[0].created_at;
    expect(await summary()).toEqual({ reply_count: 1, last_reply_at: againAt, participants: ['ann', 'dan'] });
    expect(await listed('dan')).toMatchObject({ last_reply_id: again, unread_count: 1 });
    expect(await listed('ben')).toBeUndefined();
  });

  it("a user's erasure blanks their replies in every thread and takes their threads and thread cursors; the instance wipe forgets every thread", async () => {
    await s.request('POST', s.chat('/users'), { body: { id: 'fay', name: 'fay' } });
    await createRoom('erasing', { user_ids: ['ben', 'fay'] });
    const parent = await send('erasing', 'parent');
    const secret = `fay's secret ${Date.now()}`;
    const faysReply = await replyId('erasing', parent, secret, 'fay');
    const bensReply = await replyId('erasing', parent, 'ben stays', 'ben');
    expect((await setThreadCursor('erasing', parent, 'fay', faysReply)).status).toBe(204);
    expect((await myThreads('fay')).threads).toHaveLength(1);

    const requested = await s.request('POST', `/services/parley_admin/v1/${s.instanceId}/erasures`, { body: { user_id: 'fay' }, token: su() });
    expect(requested.status).toBe(202);
    await eventually(
      async () => (await s.request('GET', `/services/parley_admin/v1/${s.instanceId}/erasures/${requested.body.id}`, { token: su() })).body.status === 'completed',
      { what: 'the erasure completed' },
    );
    const page = await replies('erasing', parent, '', 'ben');
    expect(JSON.stringify(page)).not.toContain(secret);
    expect(page.find((m) => m.id === bensReply).parts).toEqual([{ type: 'text/plain', content: 'ben stays' }]);
    const thread = (await s.request('GET', s.chat(`/rooms/erasing/messages/${parent}`), { token: as('ben') })).body.thread;
    // The erased reply's tombstone stays in the thread's pages, but no summary counts it or its sender.
    expect(thread).toEqual({ reply_count: 1, last_reply_at: page.find((m) => m.id === bensReply).created_at, participants: ['ann', 'ben'] });
    expect((await myThreads('ann')).threads.find((t) => t.parent_id === parent)).toMatchObject({ reply_count: 1, unread_count: 1 });
    const cursor = await s.request('GET', s.chat(`/rooms/erasing/messages/${parent}/replies/read_cursors/fay`), { token: su() });
    expect(cursor.status).toBe(404);
    expect((await s.request('GET', s.chat('/users/fay/threads'), { token: su() })).body.threads).toEqual([]);

    // Last: the wipe takes the instance's every thread, reply, membership and cursor.
    expect((await setThreadCursor('erasing', parent, 'ben', bensReply)).status).toBe(204);
    const rowsOf = () => {
      const tables = contentsOf(join(dataDir, 'read-models.sqlite'));
      return ['thread_replies', 'threads', 'thread_members', 'thread_cursors'].map((name) => (tables[`rm_${name}_v${threadsProjection.version}`] ?? []).length);
    };
    expect(rowsOf().every((n) => n > 0)).toBe(true);
    expect((await s.request('DELETE', s.chat('/resources'), { token: su() })).status).toBe(204);
    await eventually(() => rowsOf().every((n) => n === 0), { what: "the wiped instance's threads forgotten" });
  });
});

import jwt from 'jsonwebtoken';
import PushNotifications from '@pusher/push-notifications-server';
import { randomBytes } from 'node:crypto';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';
import { scanForMarkers } from '../support/byte-scan';

/**
 * The console's per-instance reads (`/services/parley_admin/v1/<instance>/…`) on a real server
 * (the embedded default): users and rooms searched by prefix, a room's messages as metadata,
 * their content only with the read recorded in the log first (and shown by the audit API),
 * Beams devices per user and interest counts. su tokens of the instance only.
 */
describe('console inspector routes (services/parley_admin/v1)', () => {
  let s: TestServer;
  const admin = (path: string) => `/services/parley_admin/v1/${s.instanceId}${path}`;
  const get = (path: string, token?: string | null) => s.request('GET', admin(path), { token });
  const ok = async (answer: Promise<{ status: number; text: string; body: any }>) => {
    const res = await answer;
    if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
    return res.body;
  };
  const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
  const text = { first: marker('first'), second: marker('second'), third: marker('third'), deleted: marker('deleted') };
  const sent: number[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    const users = [
      { id: 'alice', name: 'Zed' },
      { id: 'alina', name: 'Alpine' },
      { id: 'bob', name: 'Alice Cooper' },
      { id: 'carol', name: 'Alice Liddell' },
      { id: 'dave', name: 'Dave' },
    ];
    await ok(s.request('POST', s.chat('/batch_users'), { body: { users } }));
    const alice = s.token({ sub: 'alice' });
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'Lobby', user_ids: ['bob', 'carol'] }, token: alice }));
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'secret-plans', name: 'Plans', private: true, user_ids: ['dave'] }, token: alice }));
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'empty', name: 'Lonely', private: false }, token: alice }));
    for (const content of [text.first, text.second, text.deleted, text.third]) {
      const parts = [{ type: 'text/plain', content }, ...(content === text.second ? [{ type: 'image/png', url: 'https://example.com/cat.png' }] : [])];
      sent.push((await ok(s.request('POST', s.chat('/rooms/lobby/messages'), { body: { parts }, token: alice }))).message_id);
    }
    // Deleted through v2: a tombstone in place.
    await ok(s.request('DELETE', s.chat(`/messages/${sent[2]}`, 'v2')));
  }, 60_000);
  afterAll(() => s?.close());

  it('answers su tokens of the instance only', async () => {
    const paths = ['/users', '/rooms', '/rooms/lobby/messages', '/rooms/lobby/messages?content=true', '/beams/users/alice/devices', '/beams/interests'];
    const otherInstance = jwt.sign({ instance: 'another-instance', iss: `api_keys/${s.keyId}`, su: true }, s.secret, { algorithm: 'HS256', expiresIn: 600 });
    const forged = jwt.sign({ instance: s.instanceId, iss: `api_keys/${s.keyId}`, su: true }, 'not-the-secret', { algorithm: 'HS256', expiresIn: 600 });
    for (const path of paths) {
      expect([path, (await get(path, null)).status]).toEqual([path, 401]);
      expect([path, (await get(path, forged)).status]).toEqual([path, 401]);
      expect([path, (await get(path, otherInstance)).status]).toEqual([path, 401]);
      const asUser = await get(path, s.token({ sub: 'alice' }));
      expect([path, asUser.status, asUser.body.error]).toEqual([path, 403, 'services/parley_admin/forbidden/su_required']);
      expect(asUser.text).not.toContain('MARKER');
    }
  });

  it('searches users by id or name prefix, a page at a time', async () => {
    const ids = (body: any) => body.users.map((u: any) => u.id);
    expect(ids(await ok(get('/users')))).toEqual(['alice', 'alina', 'bob', 'carol', 'dave']);
    const first = await ok(get('/users?prefix=Al&limit=1'));
    expect(first).toEqual({ users: [{ id: 'bob', name: 'Alice Cooper', created_at: expect.any(String), updated_at: expect.any(String) }], next: expect.any(String) });
    // "Al" matches no id (ids are case-sensitive) and three names in any case, in name order.
    const second = await ok(get(`/users?prefix=Al&limit=1&after=${first.next}`));
    const third = await ok(get(`/users?prefix=Al&limit=1&after=${second.next}`));
    expect([...ids(second), ...ids(third)]).toEqual(['carol', 'alina']);
    expect(third.next).toBeUndefined();
    // "al" matches ids first ("alice" is named "Zed"), then names.
    expect(ids(await ok(get('/users?prefix=al')))).toEqual(['alice', 'alina', 'bob', 'carol']);
    expect(ids(await ok(get('/users?prefix=ALICE%20L')))).toEqual(['carol']);
    // A rename moves the user in the search.
    await ok(s.request('PUT', s.chat('/users/dave'), { body: { name: 'Alfonso' } }));
    expect(ids(await ok(get('/users?prefix=alf')))).toEqual(['dave']);
    expect(ids(await ok(get('/users?prefix=dav')))).toEqual(['dave']);
    expect(ids(await ok(get('/users?prefix=Dave')))).toEqual([]);
    expect(ids(await ok(get('/users?prefix=nobody')))).toEqual([]);
    expect((await get('/users?limit=101')).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_limit');
    expect((await get('/users?after=garbage')).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_after');
    expect((await get(`/users?prefix=${'x'.repeat(201)}`)).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_prefix');
  });

  it('searches rooms by id or name prefix, private ones included, with their member counts', async () => {
    const all = await ok(get('/rooms'));
    expect(all.rooms).toEqual([
      { id: 'empty', name: 'Lonely', private: false, member_count: 1, created_at: expect.any(String), updated_at: expect.any(String) },
      { id: 'lobby', name: 'Lobby', private: false, member_count: 3, created_at: expect.any(String), updated_at: expect.any(String) },
      { id: 'secret-plans', name: 'Plans', private: true, member_count: 2, created_at: expect.any(String), updated_at: expect.any(String) },
    ]);
    expect((await ok(get('/rooms?prefix=P'))).rooms.map((r: any) => r.id)).toEqual(['secret-plans']);
    expect((await ok(get('/rooms?prefix=l'))).rooms.map((r: any) => r.id)).toEqual(['lobby', 'empty']);
    expect((await ok(get('/rooms?prefix=PLA'))).rooms.map((r: any) => r.id)).toEqual(['secret-plans']);
    const page = await ok(get('/rooms?limit=2'));
    expect(page.rooms.map((r: any) => r.id)).toEqual(['empty', 'lobby']);
    expect((await ok(get(`/rooms?limit=2&after=${page.next}`))).rooms.map((r: any) => r.id)).toEqual(['secret-plans']);
  });

  it("lists a room's messages as metadata only, newest first, paged, and what came after an id for a live tail", async () => {
    const res = await get('/rooms/lobby/messages?limit=2');
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('MARKER');
    expect(res.text).not.toContain('example.com');
    expect(res.body).toEqual({
      messages: [
        { id: sent[3], user_id: 'alice', created_at: expect.any(String), updated_at: expect.any(String), deleted: false, parts: [{ type: 'text/plain', bytes: Buffer.byteLength(text.third) }] },
        { id: sent[2], user_id: 'alice', created_at: expect.any(String), updated_at: expect.any(String), deleted: true, deleted_at: expect.any(String), parts: [] },
      ],
      next: sent[2],
    });
    const older = await ok(get(`/rooms/lobby/messages?limit=2&before=${res.body.next}`));
    expect(older.messages.map((m: any) => m.id)).toEqual([sent[1], sent[0]]);
    expect(older.messages[0].parts).toEqual([
      { type: 'text/plain', bytes: Buffer.byteLength(text.second) },
      { type: 'image/png', bytes: 'https://example.com/cat.png'.length },
    ]);
    expect(older.next).toBeUndefined();
    const tail = await ok(get(`/rooms/lobby/messages?after=${sent[1]}`));
    expect(tail.messages.map((m: any) => m.id)).toEqual([sent[2], sent[3]]);
    expect((await ok(get(`/rooms/lobby/messages?after=${sent[3]}`))).messages).toEqual([]);
    expect((await get('/rooms/nowhere/messages')).body.error).toBe('services/parley_admin/not_found/room_not_found');
    expect((await get('/rooms/lobby/messages?before=1&after=1')).status).toBe(422);
    expect((await get('/rooms/lobby/messages?before=x')).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_before');
    expect((await get('/rooms/lobby/messages?content=yes')).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_content');
  });

  it('shows content only with content=true, and records that read first, as the audit API shows (no content in the record)', async () => {
    const res = await get(`/rooms/lobby/messages?content=true&before=${sent[3]}&limit=2`);
    expect(res.status).toBe(200);
    expect(res.body.messages).toEqual([
      { id: sent[2], user_id: 'alice', created_at: expect.any(String), updated_at: expect.any(String), deleted: true, deleted_at: expect.any(String), parts: [] },
      {
        id: sent[1],
        user_id: 'alice',
        created_at: expect.any(String),
        updated_at: expect.any(String),
        deleted: false,
        parts: [
          { type: 'text/plain', content: text.second },
          { type: 'image/png', url: 'https://example.com/cat.png' },
        ],
      },
    ]);
    expect(res.text).not.toContain(text.deleted);

    const room = await ok(s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/lobby?limit=1000`));
    const reads = room.events.filter((e: any) => e.type === 'MessageContentRead');
    expect(reads).toEqual([
      expect.objectContaining({
        stream: `contentread-${s.instanceId}.lobby`,
        actor: expect.objectContaining({ key_id: s.keyId, su: true }),
        data: { room_id: 'lobby', message_count: 2, first_message_id: sent[1], last_message_id: sent[2], read_at: expect.any(String) },
      }),
    ]);
    expect(JSON.stringify(reads)).not.toContain('MARKER');
    const actor = await ok(s.request('GET', `/services/parley_audit/v1/${s.instanceId}/actors/key:${s.keyId}?limit=1000`));
    expect(actor.events.filter((e: any) => e.type === 'MessageContentRead')).toHaveLength(1);
    // A metadata read records nothing.
    await ok(get('/rooms/lobby/messages'));
    const after = await ok(s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/lobby?limit=1000`));
    expect(after.events.filter((e: any) => e.type === 'MessageContentRead')).toHaveLength(1);
  });

  it('answers no content when the read cannot be recorded', async () => {
    const store = s.server.app.get<EventStore>(EVENT_STORE);
    const append = store.append.bind(store);
    // The real store, refusing appends to the content reads' streams only.
    (store as { append: EventStore['append'] }).append = (stream, events, expected) =>
      stream.startsWith('contentread-') ? Promise.reject(Object.assign(new Error('SQLITE_IOERR: disk I/O error'), { code: 'SQLITE_IOERR' })) : append(stream, events, expected);
    try {
      const res = await get('/rooms/lobby/messages?content=true');
      expect([res.status, res.body.error]).toEqual([503, 'services/parley_admin/unavailable/content_read_not_recorded']);
      expect(res.text).not.toContain('MARKER');
      // Metadata still reads.
      expect((await get('/rooms/lobby/messages')).status).toBe(200);
    } finally {
      delete (store as { append?: unknown }).append;
    }
    expect((await get('/rooms/lobby/messages?content=true&limit=1')).status).toBe(200);
  });

  it("never shows an erased user's content", async () => {
    const secret = marker('erased');
    await ok(s.request('POST', s.chat('/users'), { body: { id: 'erin', name: 'Erin' } }));
    await ok(s.request('PUT', s.chat('/rooms/lobby/users/add'), { body: { user_ids: ['erin'] } }));
    const id = (await ok(s.request('POST', s.chat('/rooms/lobby/messages'), { body: { parts: [{ type: 'text/plain', content: secret }] }, token: s.token({ sub: 'erin' }) }))).message_id;
    expect((await ok(get('/rooms/lobby/messages?content=true&limit=1'))).messages[0].parts).toEqual([{ type: 'text/plain', content: secret }]);
    const { id: erasure } = await ok(s.request('POST', admin('/erasures'), { body: { user_id: 'erin' } }));
    await eventually(async () => (await ok(get(`/erasures/${erasure}`))).status === 'completed', { what: 'the erasure completed', timeoutMs: 30_000 });
    const res = await get('/rooms/lobby/messages?content=true&limit=1');
    expect(res.body.messages).toEqual([expect.objectContaining({ id, user_id: 'erin', deleted: true, parts: [] })]);
    expect(res.text).not.toContain(secret);
    expect((await ok(get('/users?prefix=erin'))).users).toEqual([]);
  });

  it("shows a thread's summary on its first message and pages its replies as metadata, their content only with the read recorded, naming the thread", async () => {
    const replyText = [marker('reply-1'), marker('reply-2'), marker('reply-3')];
    const alice = s.token({ sub: 'alice' });
    const bob = s.token({ sub: 'bob' });
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'forum', name: 'Forum', user_ids: ['bob', 'carol'] }, token: alice }));
    const send = async (path: string, token: string, content: string, extra: object = {}) =>
      (await ok(s.request('POST', s.chat(`/rooms/forum/messages${path}`), { body: { parts: [{ type: 'text/plain', content }], ...extra }, token }))).message_id as number;
    const parent = await send('', alice, marker('parent'));
    const quiet = await send('', alice, marker('no-thread'));
    const replies = [await send(`/${parent}/replies`, bob, replyText[0]), await send(`/${parent}/replies`, bob, replyText[1], { also_in_room: true })];
    replies.push(await send(`/${parent}/replies`, s.token({ sub: 'carol' }), replyText[2]));

    // The room's page: the parent with its summary (metadata: a count, a time, user ids); the reply also in the room with its parent; no thread-only reply.
    const room = await ok(get('/rooms/forum/messages'));
    expect(room.messages.map((m: any) => m.id)).toEqual([replies[1], quiet, parent]);
    const shownParent = room.messages.find((m: any) => m.id === parent);
    expect(shownParent.thread).toEqual({ reply_count: 3, last_reply_at: expect.any(String), participants: ['alice', 'bob', 'carol'] });
    expect(room.messages.find((m: any) => m.id === replies[1])).toMatchObject({ parent_id: parent });
    expect(room.messages.find((m: any) => m.id === quiet).thread).toBeUndefined();

    // The thread, newest first, metadata only, a page at a time.
    const first = await get(`/rooms/forum/messages/${parent}/replies?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      messages: [
        { id: replies[2], user_id: 'carol', created_at: expect.any(String), updated_at: expect.any(String), deleted: false, parts: [{ type: 'text/plain', bytes: Buffer.byteLength(replyText[2]) }], parent_id: parent },
        { id: replies[1], user_id: 'bob', created_at: expect.any(String), updated_at: expect.any(String), deleted: false, parts: [{ type: 'text/plain', bytes: Buffer.byteLength(replyText[1]) }], parent_id: parent, also_in_room: true },
      ],
      next: replies[1],
    });
    expect(first.text).not.toContain('MARKER');
    expect((await ok(get(`/rooms/forum/messages/${parent}/replies?limit=2&before=${first.body.next}`))).messages.map((m: any) => m.id)).toEqual([replies[0]]);
    expect((await ok(get(`/rooms/forum/messages/${parent}/replies?after=${replies[0]}`))).messages.map((m: any) => m.id)).toEqual([replies[1], replies[2]]);
    expect(await ok(get(`/rooms/forum/messages/${quiet}/replies`))).toEqual({ messages: [] });
    expect((await get('/rooms/forum/messages/999999/replies')).body.error).toBe('services/parley_admin/not_found/parent_not_found');
    // A reply (in its thread alone, or also in the room) has no thread of its own, as on v6.
    for (const reply of [replies[0], replies[1]]) {
      const refused = await get(`/rooms/forum/messages/${reply}/replies`);
      expect([refused.status, refused.body.error]).toEqual([422, 'services/parley_admin/unprocessable_entity/parent_is_reply']);
    }
    expect((await get('/rooms/nowhere/messages/1/replies')).body.error).toBe('services/parley_admin/not_found/room_not_found');
    expect((await get(`/rooms/forum/messages/${parent}/replies?content=yes`)).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_content');

    // Content: recorded first, naming the thread, no content in the record.
    const withContent = await ok(get(`/rooms/forum/messages/${parent}/replies?content=true&limit=2`));
    expect(withContent.messages.map((m: any) => m.parts)).toEqual([[{ type: 'text/plain', content: replyText[2] }], [{ type: 'text/plain', content: replyText[1] }]]);
    const audit = await ok(s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/forum?limit=1000`));
    const reads = audit.events.filter((e: any) => e.type === 'MessageContentRead');
    expect(reads).toEqual([
      expect.objectContaining({
        stream: `contentread-${s.instanceId}.forum`,
        actor: expect.objectContaining({ key_id: s.keyId, su: true }),
        data: { room_id: 'forum', message_count: 2, first_message_id: replies[1], last_message_id: replies[2], parent_id: parent, read_at: expect.any(String) },
      }),
    ]);
    expect(JSON.stringify(reads)).not.toContain('MARKER');

    // su tokens of the instance only: a member of the room gets nothing.
    const path = `/rooms/forum/messages/${parent}/replies?content=true`;
    const otherInstance = jwt.sign({ instance: 'another-instance', iss: `api_keys/${s.keyId}`, su: true }, s.secret, { algorithm: 'HS256', expiresIn: 600 });
    expect((await get(path, null)).status).toBe(401);
    expect((await get(path, otherInstance)).status).toBe(401);
    for (const token of [alice, bob]) {
      const refused = await get(path, token);
      expect([refused.status, refused.body.error]).toEqual([403, 'services/parley_admin/forbidden/su_required']);
      expect(refused.text).not.toContain('MARKER');
    }
  });

  it("shows moderators what a shadow-banned user sends, marked shadow, in the room's pages and its threads; the v6 routes and a user token see none of it", async () => {
    const alice = s.token({ sub: 'alice' });
    const bob = s.token({ sub: 'bob' });
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'judged', name: 'Judged', user_ids: ['bob', 'carol'] }, token: alice }));
    const send = async (path: string, token: string, content: string, extra: object = {}) =>
      (await ok(s.request('POST', s.chat(`/rooms/judged/messages${path}`), { body: { parts: [{ type: 'text/plain', content }], ...extra }, token }))).message_id as number;
    const parent = await send('', alice, marker('parent'));
    const quiet = await send('', alice, marker('quiet'));
    const openReply = await send(`/${parent}/replies`, s.token({ sub: 'carol' }), marker('open-reply'));
    await ok(s.request('PUT', s.chat('/rooms/judged/bans/bob'), { body: { shadow: true, reason: 'spam' } }));
    const shadowText = marker('shadowed');
    const shadowed = await send('', bob, shadowText);
    const shadowReply = await send(`/${parent}/replies`, bob, marker('shadow-reply'));
    const shadowAlsoInRoom = await send(`/${parent}/replies`, bob, marker('shadow-also'), { also_in_room: true });
    const shadowOnlyThread = await send(`/${quiet}/replies`, bob, marker('shadow-only-thread'));

    // The console's room page: every message, those sent under the ban marked; the summaries count their replies, saying how many.
    const room = await ok(get('/rooms/judged/messages'));
    expect(room.messages.map((m: any) => [m.id, m.shadow])).toEqual([
      [shadowAlsoInRoom, true],
      [shadowed, true],
      [quiet, undefined],
      [parent, undefined],
    ]);
    expect(room.messages.find((m: any) => m.id === shadowed)).toMatchObject({ user_id: 'bob', deleted: false, parts: [{ type: 'text/plain', bytes: Buffer.byteLength(shadowText) }] });
    expect(JSON.stringify(room)).not.toContain('MARKER');
    expect(room.messages.find((m: any) => m.id === parent).thread).toEqual({ reply_count: 3, last_reply_at: expect.any(String), participants: ['alice', 'carol', 'bob'], shadow_reply_count: 2 });
    expect(room.messages.find((m: any) => m.id === quiet).thread).toEqual({ reply_count: 1, last_reply_at: expect.any(String), participants: ['alice', 'bob'], shadow_reply_count: 1 });
    // A live tail (after an id) and paging (before an id) see them too.
    expect((await ok(get(`/rooms/judged/messages?after=${quiet}`))).messages.map((m: any) => [m.id, m.shadow])).toEqual([[shadowed, true], [shadowAlsoInRoom, true]]);
    expect((await ok(get(`/rooms/judged/messages?limit=1&before=${shadowAlsoInRoom}`))).messages.map((m: any) => m.id)).toEqual([shadowed]);

    // The thread's replies: the shadowed ones marked; their content only with the read recorded, as any content.
    const thread = await ok(get(`/rooms/judged/messages/${parent}/replies`));
    expect(thread.messages.map((m: any) => [m.id, m.shadow])).toEqual([
      [shadowAlsoInRoom, true],
      [shadowReply, true],
      [openReply, undefined],
    ]);
    expect((await ok(get(`/rooms/judged/messages/${quiet}/replies`))).messages.map((m: any) => [m.id, m.shadow])).toEqual([[shadowOnlyThread, true]]);
    const withContent = await ok(get(`/rooms/judged/messages?content=true&limit=2`));
    expect(withContent.messages.map((m: any) => [m.id, m.shadow, m.parts])).toEqual([
      [shadowAlsoInRoom, true, [{ type: 'text/plain', content: expect.stringContaining('MARKER-shadow-also') }]],
      [shadowed, true, [{ type: 'text/plain', content: shadowText }]],
    ]);
    const audit = await ok(s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/judged?limit=1000`));
    expect(audit.events.filter((e: any) => e.type === 'MessageContentRead').map((e: any) => e.data)).toEqual([
      { room_id: 'judged', message_count: 2, first_message_id: shadowed, last_message_id: shadowAlsoInRoom, read_at: expect.any(String) },
    ]);

    // The v6 routes are as they were, for an su token too: a bystander's view, the summaries without the shadowed replies.
    for (const token of [undefined, s.token({ sub: 'carol' })]) {
      const v6 = await ok(s.request('GET', s.chat('/rooms/judged/messages?limit=10'), { ...(token && { token }) }));
      expect(v6.map((m: any) => m.id)).toEqual([quiet, parent]);
      expect(JSON.stringify(v6)).not.toContain('shadow');
      expect(v6.find((m: any) => m.id === parent).thread).toEqual({ reply_count: 1, last_reply_at: expect.any(String), participants: ['alice', 'carol'] });
    }
    expect((await ok(s.request('GET', s.chat(`/rooms/judged/messages/${parent}/replies`)))).map((m: any) => m.id)).toEqual([openReply]);

    // The console's reads: su tokens only; neither the banned user nor a member of the room gets anything.
    for (const path of ['/rooms/judged/messages', `/rooms/judged/messages/${parent}/replies?content=true`]) {
      for (const token of [bob, s.token({ sub: 'carol' })]) {
        const refused = await get(path, token);
        expect([refused.status, refused.body.error]).toEqual([403, 'services/parley_admin/forbidden/su_required']);
        expect(refused.text).not.toContain('MARKER');
      }
    }
  });

  it("leaves no copy of a deleted user's or room's name, in any case, in the data directory", async () => {
    const names = { user: marker('User-Name'), renamed: marker('Renamed'), room: marker('Room-Name') };
    const folded = Object.values(names).map((n) => n.toLowerCase());
    await ok(s.request('POST', s.chat('/users'), { body: { id: 'gone', name: names.user } }));
    await ok(s.request('PUT', s.chat('/users/gone'), { body: { name: names.renamed } }));
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'gone-room', name: names.room }, token: s.token({ sub: 'gone' }) }));
    expect((await ok(get(`/users?prefix=${folded[1]}`))).users.map((u: any) => u.id)).toEqual(['gone']);
    expect((await ok(get(`/rooms?prefix=${folded[2]}`))).rooms.map((r: any) => r.id)).toEqual(['gone-room']);
    // The names read model holds them case-folded: a scan for the folded forms finds them there.
    expect(scanForMarkers({ folders: [s.dataDir] }, folded.slice(1))).not.toEqual([]);

    await ok(s.request('DELETE', s.chat('/rooms/gone-room')));
    await ok(s.request('DELETE', s.chat('/users/gone')));
    expect((await ok(get(`/users?prefix=${folded[1]}`))).users).toEqual([]);
    expect((await ok(get(`/rooms?prefix=${folded[2]}`))).rooms).toEqual([]);
    await eventually(() => scanForMarkers({ folders: [s.dataDir] }, folded).length === 0, {
      what: 'no file of DATA_DIR holds the folded names',
      timeoutMs: 20_000,
    });
  });

  it('lists the devices of a Beams user and the interests devices hold, with their subscriber counts', async () => {
    const devices = (path = '') => `/device_api/v1/instances/${s.instanceId}/devices/fcm${path}`;
    const register = async () =>
      (await ok(s.request('POST', devices(), { body: { token: `APA91b${randomBytes(40).toString('base64url')}`, knownPreviousClientIds: [], metadata: {} }, token: null }))).id as string;
    const beamsToken = new PushNotifications({ instanceId: s.instanceId, secretKey: s.secret } as any).generateToken('alice').token;
    const phone = await register();
    const tablet = await register();
    const stranger = await register();
    for (const device of [phone, tablet]) await ok(s.request('PUT', devices(`/${device}/user`), { token: beamsToken }));
    await ok(s.request('PUT', devices(`/${phone}/interests`), { body: { interests: ['news', 'news-sport', 'weather'] }, token: null }));
    await ok(s.request('PUT', devices(`/${tablet}/interests`), { body: { interests: ['news'] }, token: null }));
    await ok(s.request('PUT', devices(`/${stranger}/interests`), { body: { interests: ['news', 'offers'] }, token: null }));

    const mine = await ok(get('/beams/users/alice/devices'));
    expect(mine.devices).toEqual(
      [phone, tablet].sort().map((id) => ({ id, platform: 'fcm', created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })),
    );
    expect(JSON.stringify(mine)).not.toContain('APA91b');
    const firstDevice = await ok(get('/beams/users/alice/devices?limit=1'));
    expect(firstDevice.devices).toHaveLength(1);
    expect((await ok(get(`/beams/users/alice/devices?limit=1&after=${firstDevice.next}`))).devices.map((d: any) => d.id)).toEqual([[phone, tablet].sort()[1]]);
    expect((await ok(get('/beams/users/nobody/devices'))).devices).toEqual([]);

    expect((await ok(get('/beams/interests'))).interests).toEqual([
      { name: 'news', subscriber_count: 3 },
      { name: 'news-sport', subscriber_count: 1 },
      { name: 'offers', subscriber_count: 1 },
      { name: 'weather', subscriber_count: 1 },
    ]);
    expect((await ok(get('/beams/interests?prefix=news'))).interests.map((i: any) => i.name)).toEqual(['news', 'news-sport']);
    const page = await ok(get('/beams/interests?limit=2'));
    expect(page).toEqual({ interests: [{ name: 'news', subscriber_count: 3 }, { name: 'news-sport', subscriber_count: 1 }], next: 'news-sport' });
    expect((await ok(get(`/beams/interests?limit=2&after=${page.next}`))).interests.map((i: any) => i.name)).toEqual(['offers', 'weather']);
  });
});

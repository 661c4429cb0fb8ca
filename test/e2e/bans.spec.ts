/**
 * Bans and frozen rooms (issue 22, moderation): room and instance bans with a reason, an end
 * and shadowing, enforced on every write path and room subscription through one check; frozen
 * rooms read only.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeclaredRoutes } from '../../src/modules/roles/declared-routes';
import { ALLOWED_WHEN_BANNED, ALLOWED_WHEN_FROZEN } from '../../src/modules/bans/restrictions';
import { scanForMarkers } from '../support/byte-scan';
import { HttpSubscription, openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';
import { contentsOf } from '../support/sqlite-files';
import { reactionsProjection } from '../../projections/reactions/reactions.projection';

/** A route's path with `:version` v6, `:instanceId` the server's, and the other parameters from `values` (else `x`). */
const pathOf = (pattern: string, instanceId: string, values: Record<string, string>) =>
  pattern.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => (name === 'version' ? 'v6' : name === 'instanceId' ? instanceId : (values[name] ?? 'x')));

/** The frame that ends a subscription (`[255, status, headers, body]`), skipping what comes before it. */
const endOf = async (stream: HttpSubscription) => {
  for (;;) {
    const frame = await stream.next(10_000);
    if (frame[0] === 255) return { status: frame[1], body: frame[3] };
  }
};

describe('bans and frozen rooms', () => {
  let dataDir: string;
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const su = () => s.token({ su: true });
  const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
  const admin = (path: string) => `/services/parley_admin/v1/${s.instanceId}${path}`;
  const send = (room: string, text: string, user: string) =>
    s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content: text }] }, token: as(user) });
  const banInRoom = (room: string, user: string, by: string | null, body?: object) =>
    s.request('PUT', s.chat(`/rooms/${room}/bans/${user}`), { token: by === null ? su() : as(by), ...(body && { body }) });
  const unbanInRoom = (room: string, user: string, by: string | null) =>
    s.request('DELETE', s.chat(`/rooms/${room}/bans/${user}`), { token: by === null ? su() : as(by) });
  const createRoom = async (id: string, members: string[] = ['ben', 'cat', 'eve', 'mod']) =>
    expect((await s.request('POST', s.chat('/rooms'), { body: { id, name: id, user_ids: members }, token: as('ann') })).status).toBe(201);
  const expectError = async (response: Promise<{ status: number; body: any }>, status: number, reason: string) => {
    const answer = await response;
    expect([answer.status, answer.body.error]).toEqual([status, `services/chatkit/${reason}`]);
    return answer.body;
  };
  const files = () => ['events.sqlite', 'events.sqlite-wal', 'read-models.sqlite', 'read-models.sqlite-wal'].map((f) => join(dataDir, f));

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-bans-'));
    s = await startTestServer({ dataDir });
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'eve', 'mod', 'boss'].map((id) => ({ id, name: id })) } });
    // `mod` moderates the room "lobby" only (a room role holding room:ban and room:freeze); `boss` is a global admin.
    expect((await s.request('POST', authz('/roles'), { body: { name: 'moderator', permissions: ['room:ban', 'room:freeze'], scope: 'room' } })).status).toBe(201);
    await createRoom('lobby');
    expect((await s.request('PUT', authz('/users/mod/roles'), { body: { name: 'moderator', room_id: 'lobby' } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/boss/roles'), { body: { name: 'admin' } })).status).toBe(201);
  });
  afterAll(async () => {
    await s?.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a room ban refuses the user’s sends with 403 banned naming its end, leaves others alone, and is lifted', async () => {
    expect((await send('lobby', 'before', 'ben')).status).toBe(201);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const banned = await banInRoom('lobby', 'ben', 'mod', { reason: 'spam', until });
    expect([banned.status, banned.body]).toEqual([200, { user_id: 'ben', room_id: 'lobby', reason: 'spam', shadow: false, banned_by: 'mod', banned_at: expect.any(String), until }]);

    const refused = await expectError(send('lobby', 'during', 'ben'), 403, 'forbidden/banned');
    expect(refused.error_description).toContain(until);
    expect((await send('lobby', 'bystander', 'cat')).status).toBe(201);
    // Reading stays open to them.
    expect((await s.request('GET', s.chat('/rooms/lobby/messages'), { token: as('ben') })).status).toBe(200);

    const listed = await s.request('GET', s.chat('/rooms/lobby/bans'), { token: as('mod') });
    expect([listed.status, listed.body.bans.map((b: any) => [b.user_id, b.reason])]).toEqual([200, [['ben', 'spam']]]);

    expect((await unbanInRoom('lobby', 'ben', 'mod')).status).toBe(204);
    expect((await unbanInRoom('lobby', 'ben', 'mod')).status).toBe(204); // again: nothing to lift
    expect((await send('lobby', 'after', 'ben')).status).toBe(201);
    expect((await s.request('GET', s.chat('/rooms/lobby/bans'), { token: as('mod') })).body).toEqual({ bans: [] });
  });

  it('a ban ends by itself at its until', async () => {
    await createRoom('brief');
    const until = new Date(Date.now() + 1500).toISOString();
    expect((await banInRoom('brief', 'eve', null, { until })).status).toBe(200);
    await expectError(send('brief', 'now?', 'eve'), 403, 'forbidden/banned');
    await eventually(async () => (await send('brief', 'now!', 'eve')).status === 201, { what: 'the ban past its until let her send' });
  });

  it('answers bad input with a clear 4xx and bans no one', async () => {
    await expectError(banInRoom('lobby', 'mod', 'mod'), 422, 'unprocessable_entity/cannot_ban_self');
    await expectError(banInRoom('lobby', 'nobody', 'mod'), 404, 'not_found/user_not_found');
    await expectError(banInRoom('no-such-room', 'ben', null), 404, 'not_found/room_not_found');
    await expectError(banInRoom('lobby', 'ben', 'mod', { reason: 'x'.repeat(501) }), 422, 'unprocessable_entity/reason_too_long');
    await expectError(banInRoom('lobby', 'ben', 'mod', { reason: 7 }), 422, 'unprocessable_entity/invalid_reason');
    await expectError(banInRoom('lobby', 'ben', 'mod', { until: new Date(Date.now() - 1000).toISOString() }), 422, 'unprocessable_entity/invalid_until');
    await expectError(banInRoom('lobby', 'ben', 'mod', { until: 'soon' }), 422, 'unprocessable_entity/invalid_until');
    await expectError(banInRoom('lobby', 'ben', 'mod', { shadow: 'yes' }), 422, 'unprocessable_entity/invalid_shadow');
    await expectError(s.request('PUT', s.chat('/rooms/lobby/bans/ben'), { rawBody: '[1]', token: as('mod'), headers: { 'content-type': 'application/json' } }), 400, 'bad_request/invalid_body');
    const self = await s.request('PUT', admin('/bans/ben'), { token: s.token({ su: true, sub: 'ben' }) });
    expect([self.status, self.body.error]).toEqual([422, 'services/parley_admin/unprocessable_entity/cannot_ban_self']);
    expect((await s.request('GET', s.chat('/rooms/lobby/bans'), { token: as('mod') })).body).toEqual({ bans: [] });
    expect((await send('lobby', 'still here', 'ben')).status).toBe(201);
  });

  it('room:ban and room:freeze belong to moderators: members and strangers are refused, instance bans need su', async () => {
    await expectError(banInRoom('lobby', 'ben', 'cat'), 403, 'forbidden/missing_permission');
    await expectError(s.request('GET', s.chat('/rooms/lobby/bans'), { token: as('cat') }), 403, 'forbidden/missing_permission');
    await expectError(s.request('PUT', s.chat('/rooms/lobby/freeze'), { token: as('cat') }), 403, 'forbidden/missing_permission');
    await createRoom('other');
    // A role in the lobby grants nothing in another room.
    await expectError(banInRoom('other', 'ben', 'mod'), 403, 'forbidden/missing_permission');
    for (const [method, path] of [['PUT', '/bans/ben'], ['DELETE', '/bans/ben'], ['GET', '/bans']]) {
      const answer = await s.request(method, admin(path), { token: as('boss') });
      expect([method, path, answer.status]).toEqual([method, path, 403]);
    }
    expect((await s.request('GET', admin('/bans'), { token: null })).status).toBe(401);
  });

  it('every write route naming a room refuses a user banned from it (all but leaving), and every write refuses one banned from the instance', async () => {
    await createRoom('walled', ['ann', 'boss', 'cat']);
    const message = (await send('walled', 'a message', 'boss')).body.message_id as number;
    expect((await banInRoom('walled', 'boss', null, { reason: 'tested' })).status).toBe(200);
    const routes = s.server.app.get(DeclaredRoutes).routes;
    const tried: string[] = [];
    for (const route of routes) {
      const rule = route.access!;
      if (['GET', 'HEAD', 'OPTIONS'].includes(route.method) || !route.url.includes(':roomId')) continue;
      if (rule.kind === 'public' || rule.kind === 'own-credential' || rule.kind === 'operator' || rule.kind === 'su') continue;
      const name = `${route.method} ${route.url}`;
      const path = pathOf(route.url, s.instanceId, { roomId: 'walled', userId: 'boss', messageId: String(message) });
      const answer = await s.request(route.method, path, { token: as('boss'), body: {} });
      const expected = ALLOWED_WHEN_BANNED.has(name) ? 'allowed' : 'banned';
      expect([name, answer.body?.error === 'services/chatkit/forbidden/banned' || answer.body?.error?.endsWith('/forbidden/banned') ? 'banned' : 'allowed']).toEqual([name, expected]);
      tried.push(name);
    }
    // Sends (v2 and v6 through one route), edits, deletes, reactions, pins, typing, joining, cursors, attachments, room changes.
    expect(tried.length).toBeGreaterThanOrEqual(15);
    expect(tried).toEqual(
      expect.arrayContaining([
        'POST /services/chatkit/:version/:instanceId/rooms/:roomId/messages',
        'POST /services/chatkit/:version/:instanceId/rooms/:roomId/typing_indicators',
        'POST /services/chatkit/:version/:instanceId/users/:userId/rooms/:roomId/join',
        'PUT /services/chatkit/v6/:instanceId/rooms/:roomId/messages/:messageId/reactions/:type',
        'PUT /services/chatkit/v6/:instanceId/rooms/:roomId/messages/:messageId/pin',
        'PUT /services/chatkit_cursors/v2/:instanceId/cursors/0/rooms/:roomId/users/:userId',
        'POST /services/chatkit/:version/:instanceId/rooms/:roomId/attachments',
        'POST /services/chatkit_files/v1/:instanceId/rooms/:roomId/users/:userId/files/:fileName',
      ]),
    );

    // An instance ban: every write route with a user token, any room or none.
    expect((await unbanInRoom('walled', 'boss', null)).status).toBe(204);
    expect((await s.request('PUT', admin('/bans/boss'), { body: { reason: 'everywhere' } })).status).toBe(200);
    const everywhere: string[] = [];
    for (const route of routes) {
      const rule = route.access!;
      if (['GET', 'HEAD', 'OPTIONS'].includes(route.method)) continue;
      if (rule.kind === 'public' || rule.kind === 'own-credential' || rule.kind === 'operator' || rule.kind === 'su') continue;
      const name = `${route.method} ${route.url}`;
      const path = pathOf(route.url, s.instanceId, { roomId: 'walled', userId: 'boss', messageId: String(message) });
      const answer = await s.request(route.method, path, { token: as('boss'), body: {} });
      const outcome = answer.body?.error?.endsWith('/forbidden/banned') ? 'banned' : 'allowed';
      expect([name, outcome]).toEqual([name, ALLOWED_WHEN_BANNED.has(name) ? 'allowed' : 'banned']);
      everywhere.push(name);
    }
    // The writes that name no room: none of them writes into a room (a new one that does, naming its room elsewhere than the path, fails here).
    expect(everywhere.filter((name) => !tried.includes(name)).sort()).toEqual([
      'DELETE /services/chatkit/v6/:instanceId/users/:userId/mutes/:mutedUserId',
      'DELETE /services/chatkit_files/v1/:instanceId/users/:userId',
      'POST /services/chatkit/:version/:instanceId/rooms',
      'POST /services/chatkit/v6/:instanceId/users/:userId/reports',
      'PUT /services/chatkit/:version/:instanceId/users/:userId',
      'PUT /services/chatkit/v6/:instanceId/users/:userId/mutes/:mutedUserId',
    ]);
    expect(everywhere).toEqual(expect.arrayContaining(['POST /services/chatkit/:version/:instanceId/rooms']));
    expect(everywhere.length).toBeGreaterThan(tried.length);
    const listed = await s.request('GET', admin('/bans'));
    expect(listed.body.bans.map((b: any) => [b.user_id, b.reason, b.room_id])).toEqual([['boss', 'everywhere', undefined]]);
    expect((await s.request('DELETE', admin('/bans/boss'))).status).toBe(204);
    // Leaving was allowed all along: back in, and writing again.
    expect((await s.request('POST', s.chat('/users/boss/rooms/walled/join'), { token: as('boss') })).status).toBe(200);
    expect((await send('walled', 'free again', 'boss')).status).toBe(201);
  });

  it('a banned user cannot open the room’s subscription, and an open one is closed by the ban', async () => {
    await createRoom('watched');
    const url = `${s.baseUrl}${s.chat('/rooms/watched')}`;
    const open = await openHttpSubscription(url, { authorization: `Bearer ${as('cat')}` });
    expect(open.status).toBe(200);
    const bystander = await openHttpSubscription(url, { authorization: `Bearer ${as('eve')}` });
    expect(bystander.status).toBe(200);
    expect((await banInRoom('watched', 'cat', null)).status).toBe(200);
    const end = await endOf(open);
    expect([end.status, end.body.error]).toEqual([403, 'services/chatkit/forbidden/banned']);
    await open.close();

    const refused = await openHttpSubscription(url, { authorization: `Bearer ${as('cat')}` });
    expect([refused.status, refused.body.error]).toEqual([403, 'services/chatkit/forbidden/banned']);
    // The bystander's subscription goes on.
    expect((await send('watched', 'still live', 'eve')).status).toBe(201);
    const seen = await bystander.nextEvent();
    expect(seen.body).toMatchObject({ event_name: 'new_message' });
    await bystander.close();
  });

  it('a room ban takes the room out of the user’s subscription (removed_from_room, not in initial_state) and its lifting brings it back', async () => {
    await createRoom('visible');
    const users = () => openHttpSubscription(`${s.baseUrl}${s.chat('/users')}`, { authorization: `Bearer ${as('eve')}` });
    const roomsOf = (event: any) => (event.body.data.rooms as any[]).map((r) => r.id);
    const open = await users();
    expect(roomsOf(await open.nextEvent())).toContain('visible');
    expect((await banInRoom('visible', 'eve', null)).status).toBe(200);
    expect((await open.nextEvent()).body).toMatchObject({ event_name: 'removed_from_room', data: { room_id: 'visible' } });

    const reopened = await users();
    expect(roomsOf(await reopened.nextEvent())).not.toContain('visible');
    await reopened.close();

    expect((await unbanInRoom('visible', 'eve', null)).status).toBe(204);
    expect((await open.nextEvent()).body).toMatchObject({ event_name: 'added_to_room', data: { room: { id: 'visible' } } });
    await open.close();
    // A shadow ban shows nothing.
    expect((await banInRoom('visible', 'eve', null, { shadow: true })).status).toBe(200);
    const shadowed = await users();
    expect(roomsOf(await shadowed.nextEvent())).toContain('visible');
    await shadowed.close();
    expect((await unbanInRoom('visible', 'eve', null)).status).toBe(204);
  });

  it('a frozen room is read only for everyone but su, shows it, and takes writes again once unfrozen', async () => {
    await createRoom('archive');
    expect((await s.request('PUT', s.chat('/rooms/lobby/freeze'), { token: as('mod') })).status).toBe(204);
    expect((await s.request('GET', s.chat('/rooms/lobby/freeze'), { token: as('cat') })).body).toEqual({ frozen: true });
    expect((await s.request('GET', s.chat('/rooms/archive/freeze'), { token: as('cat') })).body).toEqual({ frozen: false });
    await expectError(send('lobby', 'hello?', 'cat'), 403, 'forbidden/room_frozen');
    await expectError(s.request('POST', s.chat('/rooms/lobby/typing_indicators'), { token: as('cat'), body: {} }), 403, 'forbidden/room_frozen');
    expect((await s.request('GET', s.chat('/rooms/lobby/messages'), { token: as('cat') })).status).toBe(200);
    expect((await send('archive', 'elsewhere', 'cat')).status).toBe(201);
    const bySu = await s.request('POST', s.chat('/rooms/lobby/messages'), { body: { parts: [{ type: 'text/plain', content: 'announcement' }] }, token: s.token({ su: true, sub: 'ann' }) });
    expect(bySu.status).toBe(201);
    // The moderator still moderates a frozen room.
    expect((await banInRoom('lobby', 'eve', 'mod')).status).toBe(200);
    expect((await unbanInRoom('lobby', 'eve', 'mod')).status).toBe(204);
    expect(ALLOWED_WHEN_FROZEN.has('DELETE /services/chatkit/v6/:instanceId/rooms/:roomId/freeze')).toBe(true);
    expect((await s.request('DELETE', s.chat('/rooms/lobby/freeze'), { token: as('mod') })).status).toBe(204);
    expect((await send('lobby', 'thawed', 'cat')).status).toBe(201);
  });

  it('a shadow-banned sender’s messages succeed and show to them alone: pages, single messages, subscriptions, unread counts', async () => {
    await createRoom('shady', ['ben', 'cat', 'eve']);
    const url = (user: string) => openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/shady?message_limit=0')}`, { authorization: `Bearer ${as(user)}` });
    const [bystander, sender] = await Promise.all([url('cat'), url('ben')]);
    expect((await banInRoom('shady', 'ben', null, { shadow: true, reason: 'spam' })).status).toBe(200);
    const hidden = await send('shady', 'buy now', 'ben');
    expect(hidden.status).toBe(201);
    const hiddenId = hidden.body.message_id as number;
    const seenId = (await send('shady', 'hello', 'eve')).body.message_id as number;

    // Live: the sender sees both, the bystander only the other's (the logs are in order, so the hidden one would have come first).
    expect([(await sender.nextEvent()).body.data.id, (await sender.nextEvent()).body.data.id]).toEqual([hiddenId, seenId]);
    expect((await bystander.nextEvent()).body.data.id).toBe(seenId);
    await Promise.all([bystander.close(), sender.close()]);

    const page = async (user: string) => ((await s.request('GET', s.chat('/rooms/shady/messages'), { token: as(user) })).body as any[]).map((m) => m.id);
    expect(await page('ben')).toEqual([seenId, hiddenId]);
    expect(await page('cat')).toEqual([seenId]);
    // Message search: the bystander finds the other's message, never the shadowed one.
    const search = async (user: string, q: string) =>
      ((await s.request('GET', s.chat(`/search/messages?q=${q}`), { token: as(user) })).body.results as any[]).map((r) => r.message.id);
    expect(await search('cat', 'hello')).toEqual([seenId]);
    expect(await search('cat', 'buy')).toEqual([]);
    expect((await s.request('GET', s.chat(`/rooms/shady/messages/${hiddenId}`), { token: as('ben') })).status).toBe(200);
    expect((await s.request('GET', s.chat(`/rooms/shady/messages/${hiddenId}`), { token: as('cat') })).status).toBe(404);
    // A new subscription replays the same way.
    const replay = async (user: string) => {
      const stream = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/shady?message_limit=10')}`, { authorization: `Bearer ${as(user)}` });
      const ids: number[] = [];
      for (;;) {
        const event = await stream.nextEvent();
        ids.push(event.body.data.id);
        if (event.body.data.id === seenId) break;
      }
      await stream.close();
      return ids;
    };
    expect(await replay('ben')).toEqual([hiddenId, seenId]);
    expect(await replay('cat')).toEqual([seenId]);
    // Unread counts of others count only what they can see.
    const rooms = await s.request('GET', s.chat('/users/cat/rooms'), { token: as('cat') });
    expect(rooms.body.find((r: any) => r.id === 'shady').unread_count).toBe(1);

    // The ban lifted, what was sent under it stays hidden from everyone.
    expect((await unbanInRoom('shady', 'ben', null)).status).toBe(204);
    expect(await page('cat')).toEqual([seenId]);
    const after = (await send('shady', 'honest now', 'ben')).body.message_id as number;
    expect(await page('cat')).toEqual([after, seenId]);
  });

  it('a thread reply sent under a shadow ban shows to its sender alone, in its thread: reply pages, single reads, the live reply_added; no one’s summary counts it', async () => {
    await createRoom('shadythread', ['ben', 'cat', 'eve']);
    const reply = async (parent: number, text: string, user: string) => {
      const answer = await s.request('POST', s.chat(`/rooms/shadythread/messages/${parent}/replies`), { body: { parts: [{ type: 'text/plain', content: text }] }, token: as(user) });
      expect(answer.status).toBe(201);
      return answer.body.message_id as number;
    };
    const parent = (await send('shadythread', 'what do you think?', 'eve')).body.message_id as number;
    const first = await reply(parent, 'I agree', 'cat');
    const url = (user: string) =>
      openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/shadythread?message_limit=0&parley_events=threads')}`, { authorization: `Bearer ${as(user)}` });
    const [bystander, sender] = await Promise.all([url('cat'), url('ben')]);
    try {
      expect((await banInRoom('shadythread', 'ben', null, { shadow: true })).status).toBe(200);
      const hidden = await reply(parent, 'buy now', 'ben');
      const seen = await reply(parent, 'me too', 'eve');
      // Live: the sender has their reply in its thread, the bystander only the other's (the log is in order: the hidden one would have come first).
      const replyOf = async (stream: HttpSubscription) => {
        const event = await stream.nextEvent();
        expect(event.body).toMatchObject({ event_name: 'reply_added', data: { parent_id: parent } });
        return event.body.data.message.id as number;
      };
      expect([await replyOf(sender), await replyOf(sender)]).toEqual([hidden, seen]);
      expect(await replyOf(bystander)).toBe(seen);

      const replies = async (user: string) =>
        ((await s.request('GET', s.chat(`/rooms/shadythread/messages/${parent}/replies`), { token: as(user) })).body as any[]).map((m) => m.id);
      expect(await replies('ben')).toEqual([seen, hidden, first]);
      expect(await replies('cat')).toEqual([seen, first]);
      expect((await s.request('GET', s.chat(`/rooms/shadythread/messages/${hidden}`), { token: as('ben') })).status).toBe(200);
      expect((await s.request('GET', s.chat(`/rooms/shadythread/messages/${hidden}`), { token: as('cat') })).status).toBe(404);
      // Its who-reacted list is found as the reply is: by its sender alone.
      const reactors = await s.request('GET', s.chat(`/rooms/shadythread/messages/${hidden}/reactions`), { token: as('ben') });
      expect([reactors.status, reactors.body.reactions]).toEqual([200, []]);
      expect((await s.request('GET', s.chat(`/rooms/shadythread/messages/${hidden}/reactions`), { token: as('cat') })).status).toBe(404);
      // The summary counts the reply for its sender alone (a page of messages and a single read alike); the threads lists leave it out.
      const summaryFor = async (user: string) => {
        const single = (await s.request('GET', s.chat(`/rooms/shadythread/messages/${parent}`), { token: as(user) })).body.thread;
        const paged = ((await s.request('GET', s.chat('/rooms/shadythread/messages'), { token: as(user) })).body as any[]).find((m) => m.id === parent).thread;
        expect(paged).toEqual(single);
        return single;
      };
      expect(await summaryFor('cat')).toMatchObject({ reply_count: 2, participants: ['eve', 'cat'] });
      expect(await summaryFor('ben')).toMatchObject({ reply_count: 3, participants: ['eve', 'cat', 'ben'] });
      const catThreads = (await s.request('GET', s.chat('/users/cat/threads'), { token: as('cat') })).body.threads as any[];
      expect(catThreads.find((t) => t.parent_id === parent)).toMatchObject({ reply_count: 2, unread_count: 2, last_reply_id: seen });

      // Edited and deleted, the reply stays its sender's news alone.
      const edit = await s.request('PUT', s.chat(`/rooms/shadythread/messages/${hidden}`), { body: { parts: [{ type: 'text/plain', content: 'cheap' }] }, token: as('ben') });
      expect(edit.status).toBe(204);
      expect((await s.request('DELETE', s.chat(`/rooms/shadythread/messages/${hidden}`), { token: as('ben') })).status).toBe(204);
      const marker = await reply(parent, 'done', 'eve');
      expect((await sender.nextEvent()).body).toMatchObject({ event_name: 'reply_updated', data: { parent_id: parent, message: { id: hidden } } });
      expect((await sender.nextEvent()).body).toMatchObject({ event_name: 'reply_deleted', data: { message_id: hidden, parent_id: parent } });
      expect(await replyOf(sender)).toBe(marker);
      expect(await replyOf(bystander)).toBe(marker);
      expect(await replies('ben')).toEqual([marker, seen, first]);
      expect((await summaryFor('ben')).reply_count).toBe(3);
      expect((await summaryFor('cat')).reply_count).toBe(3);
    } finally {
      await Promise.all([bystander.close(), sender.close()]);
      await unbanInRoom('shadythread', 'ben', null);
    }
  });

  it('a shadow-banned user’s reactions and pins show to them alone: counts, mine, latest, who reacted, pins list, live events', async () => {
    await createRoom('shadyreacts', ['ben', 'cat', 'eve']);
    const react = (id: number, type: string, user: string, method = 'PUT') =>
      s.request(method, s.chat(`/rooms/shadyreacts/messages/${id}/reactions/${encodeURIComponent(type)}`), { token: as(user) });
    const pin = (id: number, user: string, method = 'PUT') => s.request(method, s.chat(`/rooms/shadyreacts/messages/${id}/pin`), { token: as(user) });
    const message = (await send('shadyreacts', 'nice', 'eve')).body.message_id as number;
    const other = (await send('shadyreacts', 'also nice', 'eve')).body.message_id as number;
    expect((await react(message, '👍', 'cat')).status).toBe(204);
    expect((await pin(other, 'cat')).status).toBe(204);
    const url = (user: string) =>
      openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/shadyreacts?message_limit=0&parley_events=reactions,pins')}`, { authorization: `Bearer ${as(user)}` });
    const [bystander, banned] = await Promise.all([url('cat'), url('ben')]);
    try {
      expect((await banInRoom('shadyreacts', 'ben', null, { shadow: true })).status).toBe(200);
      expect((await react(message, '👍', 'ben')).status).toBe(204);
      expect((await react(message, '🎉', 'ben')).status).toBe(204);
      expect((await pin(message, 'ben')).status).toBe(204);
      // Unpinning everyone's pin under the ban: undone for the user alone.
      expect((await pin(other, 'ben', 'DELETE')).status).toBe(204);
      expect((await react(message, '❤️', 'eve')).status).toBe(204);
      const marker = (await send('shadyreacts', 'pin me', 'eve')).body.message_id as number;
      expect((await pin(marker, 'eve')).status).toBe(204);

      // Live, in the log's order: the banned user's own changes, then the others'; the bystander only the others'.
      const next = async (stream: HttpSubscription) => {
        const { event_name, data } = (await stream.nextEvent()).body;
        return [event_name, data.type ?? data.message_id ?? data.id, data.user_id ?? data.pinned_by];
      };
      const own = [];
      for (let i = 0; i < 7; i += 1) own.push(await next(banned));
      expect(own).toEqual([
        ['reaction_added', '👍', 'ben'],
        ['reaction_added', '🎉', 'ben'],
        ['message_pinned', message, 'ben'],
        ['message_unpinned', other, undefined],
        ['reaction_added', '❤️', 'eve'],
        ['new_message', marker, 'eve'],
        ['message_pinned', marker, 'eve'],
      ]);
      expect([await next(bystander), await next(bystander), await next(bystander)]).toEqual([
        ['reaction_added', '❤️', 'eve'],
        ['new_message', marker, 'eve'],
        ['message_pinned', marker, 'eve'],
      ]);

      const reactionsOf = async (user: string) => {
        const fetched = (await s.request('GET', s.chat('/rooms/shadyreacts/messages'), { token: as(user) })).body as any[];
        const single = (await s.request('GET', s.chat(`/rooms/shadyreacts/messages/${message}`), { token: as(user) })).body;
        expect(fetched.find((m) => m.id === message).reactions).toEqual(single.reactions);
        const { counts, mine, latest } = single.reactions;
        return { counts, mine: [...mine].sort(), latest: (latest as any[]).map((r) => `${r.user_id} ${r.type}`).sort() };
      };
      expect(await reactionsOf('cat')).toEqual({ counts: { '👍': 1, '❤️': 1 }, mine: ['👍'], latest: ['cat 👍', 'eve ❤️'] });
      expect(await reactionsOf('ben')).toEqual({
        counts: { '👍': 2, '❤️': 1, '🎉': 1 },
        mine: ['🎉', '👍'],
        latest: ['ben 🎉', 'ben 👍', 'cat 👍', 'eve ❤️'],
      });
      const whoReacted = async (user: string) =>
        ((await s.request('GET', s.chat(`/rooms/shadyreacts/messages/${message}/reactions`), { token: as(user) })).body.reactions as any[]).map(
          (r) => `${r.user_id} ${r.type}`,
        );
      expect(await whoReacted('cat')).toEqual(['cat 👍', 'eve ❤️']);
      expect(await whoReacted('ben')).toEqual(['cat 👍', 'ben 👍', 'ben 🎉', 'eve ❤️']);
      const pins = async (user: string) =>
        ((await s.request('GET', s.chat('/rooms/shadyreacts/pins'), { token: as(user) })).body.pins as any[]).map((p) => p.message_id);
      expect(await pins('cat')).toEqual([marker, other]);
      expect(await pins('ben')).toEqual([marker, message]);

      // Taking a reaction back under the ban changes the user's view alone.
      expect((await react(message, '👍', 'ben', 'DELETE')).status).toBe(204);
      expect((await reactionsOf('ben')).counts).toEqual({ '👍': 1, '❤️': 1, '🎉': 1 });
      expect((await reactionsOf('cat')).counts).toEqual({ '👍': 1, '❤️': 1 });
      // A message sent under the ban is not there for anyone else to react to or pin.
      const hidden = (await send('shadyreacts', 'buy now', 'ben')).body.message_id as number;
      await expectError(react(hidden, '👍', 'cat'), 404, 'not_found/message_not_found');
      await expectError(pin(hidden, 'cat'), 404, 'not_found/message_not_found');
    } finally {
      await Promise.all([bystander.close(), banned.close()]);
    }
  });

  it('a user’s erasure removes the reactions they added under a shadow ban', async () => {
    await s.request('POST', s.chat('/users'), { body: { id: 'ivy', name: 'ivy' } });
    await createRoom('shadyerasure', ['ivy', 'cat']);
    const message = (await send('shadyerasure', 'hi', 'cat')).body.message_id as number;
    expect((await banInRoom('shadyerasure', 'ivy', null, { shadow: true })).status).toBe(200);
    expect((await s.request('PUT', s.chat(`/rooms/shadyerasure/messages/${message}/reactions/${encodeURIComponent('👀')}`), { token: as('ivy') })).status).toBe(204);
    const ivysShadowReactions = () =>
      (contentsOf(join(dataDir, 'read-models.sqlite'))[`rm_shadow_reactions_v${reactionsProjection.version}`] ?? []).filter((row) => JSON.parse((row as { doc: string }).doc).user_id === 'ivy').length;
    await eventually(() => ivysShadowReactions() === 1, { what: 'the shadowed reaction kept' });
    const erasure = await s.request('POST', admin('/erasures'), { body: { user_id: 'ivy' } });
    expect(erasure.status).toBe(202);
    await eventually(async () => (await s.request('GET', admin(`/erasures/${erasure.body.id}`))).body.status === 'completed', { what: 'the erasure completed' });
    await eventually(() => ivysShadowReactions() === 0, { what: 'the shadowed reaction removed' });
  });

  it('a ban’s reason is sealed in the log, shown by the audit, and gone once the ban is lifted, the room deleted or the user erased', async () => {
    const auditBans = async (room: string) =>
      ((await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/${room}?limit=1000`)).body.events as any[]).filter((e) => e.type === 'UserBanned').map((e) => e.data);
    const reason = `reason${randomBytes(6).toString('hex')}`;
    expect((await banInRoom('lobby', 'cat', 'mod', { reason })).status).toBe(200);
    expect((await s.request('GET', s.chat('/rooms/lobby/bans'), { token: as('mod') })).body.bans[0].reason).toBe(reason);
    expect(scanForMarkers({ files: files() }, [reason])).toEqual([]);
    expect((await auditBans('lobby')).map((d) => d.reason)).toContain(reason);
    expect((await unbanInRoom('lobby', 'cat', 'mod')).status).toBe(204);
    expect((await auditBans('lobby')).map((d) => d.reason)).not.toContain(reason);
    expect((await auditBans('lobby')).filter((d) => d.user_id === 'cat').at(-1)).toMatchObject({ reason: '', erased: true });

    // The room's delete destroys its bans' reasons.
    await createRoom('doomed');
    const ofRoom = `room${randomBytes(6).toString('hex')}`;
    expect((await banInRoom('doomed', 'ben', null, { reason: ofRoom })).status).toBe(200);
    expect((await s.request('DELETE', s.chat('/rooms/doomed'), { token: su() })).status).toBe(204);
    expect((await auditBans('doomed')).find((d) => d.user_id === 'ben')).toMatchObject({ reason: '', erased: true });

    // The banned user's erasure destroys the reasons of their bans, standing or not.
    await s.request('POST', s.chat('/users'), { body: { id: 'zed', name: 'zed' } });
    const ofUser = `user${randomBytes(6).toString('hex')}`;
    expect((await banInRoom('lobby', 'zed', null, { reason: ofUser })).status).toBe(200);
    const erasure = await s.request('POST', admin('/erasures'), { body: { user_id: 'zed' } });
    expect(erasure.status).toBe(202);
    await eventually(async () => (await s.request('GET', admin(`/erasures/${erasure.body.id}`))).body.status === 'completed', { what: 'the erasure completed' });
    expect((await auditBans('lobby')).find((d) => d.user_id === 'zed')).toMatchObject({ reason: '', erased: true });
  });
});

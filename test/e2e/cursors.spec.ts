import { READ_YOUR_WRITES, ReadYourWrites } from '../../src/shared/application/write-path/read-your-writes';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { openHttpSubscription, openWsSubscription, SubscriptionEvent } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';
import { sleep } from '../support/waiting';

const cursorShape = (room_id: string, user_id: string, position: number) => ({
  cursor_type: 0,
  room_id,
  user_id,
  position,
  updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
});

describe('read cursors API (chatkit_cursors v2)', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const cursors = (path: string) => `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0${path}`;
  const put = (room: string, user: string, body: unknown, token?: string) =>
    s.request('PUT', cursors(`/rooms/${encodeURIComponent(room)}/users/${encodeURIComponent(user)}`), {
      body,
      ...(token !== undefined && { token }),
    });
  const get = (path: string, token?: string) =>
    s.request('GET', cursors(path), { ...(token !== undefined && { token }) });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    s = await startTestServer();
    const users = ['ann', 'ben', 'cat', 'dot.ty'].map((id) => ({ id, name: id }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    for (const room of [
      { id: 'pub', name: 'pub', user_ids: ['ann', 'ben'] },
      { id: 'priv', name: 'priv', private: true, user_ids: ['ann', 'ben'] },
      { id: 'other', name: 'other', user_ids: ['ann'] },
    ]) {
      expect((await s.request('POST', s.chat('/rooms'), { body: room })).status).toBe(201);
    }
  });
  afterAll(() => s.close());

  describe('PUT and GET', () => {
    it('answers JSON null for a cursor never set', async () => {
      const res = await get('/rooms/pub/users/cat', as('cat'));
      expect(res.status).toBe(200);
      expect(res.text).toBe('null');
    });

    it('sets a cursor with 201 {} and reads it back (read-your-writes)', async () => {
      const res = await put('pub', 'ann', { position: 10 }, as('ann'));
      expect(res.status).toBe(201);
      expect(res.body).toEqual({});
      const got = await get('/rooms/pub/users/ann', as('ann'));
      expect(got.status).toBe(200);
      expect(got.body).toEqual(cursorShape('pub', 'ann', 10));
    });

    it('only moves forward: a lower or equal position is accepted and changes nothing', async () => {
      await put('pub', 'ben', { position: 20 }, as('ben'));
      const before = (await get('/rooms/pub/users/ben', as('ben'))).body;
      for (const position of [20, 5, 0]) {
        const res = await put('pub', 'ben', { position }, as('ben'));
        expect([position, res.status, res.body]).toEqual([position, 201, {}]);
      }
      expect((await get('/rooms/pub/users/ben', as('ben'))).body).toEqual(before);
      expect((await put('pub', 'ben', { position: 21 }, as('ben'))).status).toBe(201);
      expect((await get('/rooms/pub/users/ben')).body).toEqual(cursorShape('pub', 'ben', 21));
    });

    it('accepts position 0 as a first cursor, and user ids with dots', async () => {
      expect((await put('pub', 'dot.ty', { position: 0 }, as('dot.ty'))).status).toBe(201);
      expect((await get('/rooms/pub/users/dot.ty', as('dot.ty'))).body).toEqual(cursorShape('pub', 'dot.ty', 0));
    });

    it('answers 404 for a user or a room that does not exist', async () => {
      const user = await put('pub', 'ghost', { position: 1 });
      expect(user.status).toBe(404);
      expect(user.body.error).toBe('services/chatkit_cursors/not_found/user_not_found');
      const room = await put('nowhere', 'ann', { position: 1 }, as('ann'));
      expect(room.status).toBe(404);
      expect(room.body.error).toBe('services/chatkit_cursors/not_found/room_not_found');
    });

    it('refuses acting for another user without su (403), allows it with su', async () => {
      const res = await put('pub', 'cat', { position: 3 }, as('ann'));
      expect(res.status).toBe(403);
      expect(res.body.error).toMatch(/^services\/chatkit_cursors\/forbidden\//);
      expect((await put('pub', 'cat', { position: 3 }, s.token({ su: true }))).status).toBe(201);
      expect((await get('/rooms/pub/users/cat', as('cat'))).body).toEqual(cursorShape('pub', 'cat', 3));
    });

    it('answers 422 for a position that is not a non-negative integer', async () => {
      for (const body of [{ position: 1.5 }, { position: '7' }, { position: -1 }, { position: null }, {}]) {
        const res = await put('pub', 'ann', body, as('ann'));
        expect([body, res.status]).toEqual([body, 422]);
        expect(res.body.error).toMatch(/^services\/chatkit_cursors\/unprocessable_entity\//);
      }
      // A body that is not a JSON object at all is malformed, not merely invalid.
      const array = await put('pub', 'ann', [1], as('ann'));
      expect(array.status).toBe(400);
      expect(array.body.error).toBe('services/chatkit_cursors/bad_request/invalid_body');
    });

    it('answers 401 without a token', async () => {
      expect((await put('pub', 'ann', { position: 1 }, '')).status).toBe(401);
      expect((await s.request('GET', cursors('/users/ann'), { token: null })).status).toBe(401);
    });

    it("lists a user's cursors by room, for themselves or su", async () => {
      await put('other', 'ann', { position: 4 }, as('ann'));
      await put('priv', 'ann', { position: 2 }, as('ann'));
      const mine = await get('/users/ann', as('ann'));
      expect(mine.status).toBe(200);
      expect(mine.body).toEqual([
        cursorShape('other', 'ann', 4),
        cursorShape('priv', 'ann', 2),
        cursorShape('pub', 'ann', 10),
      ]);
      expect((await get('/users/ann')).body).toEqual(mine.body);
      expect((await get('/users/ann', as('ben'))).status).toBe(403);
      expect((await get('/users/nobody')).body).toEqual([]);
    });

    it("lists a room's cursors by user; a private room's only for members and su", async () => {
      const pub = await get('/rooms/pub', as('cat'));
      expect(pub.status).toBe(200);
      expect(pub.body.map((c: { user_id: string }) => c.user_id)).toEqual(['ann', 'ben', 'cat', 'dot.ty']);
      expect(pub.body[0]).toEqual(cursorShape('pub', 'ann', 10));
      expect((await get('/rooms/priv', as('ann'))).body).toEqual([cursorShape('priv', 'ann', 2)]);
      expect((await get('/rooms/priv')).status).toBe(200);
      // To a non-member a private room does not exist.
      const outsider = await get('/rooms/priv', as('cat'));
      expect(outsider.status).toBe(404);
      expect(outsider.body.error).toBe('services/chatkit_cursors/not_found/room_not_found');
      expect((await get('/rooms/priv/users/ann', as('cat'))).status).toBe(404);
      expect((await get('/rooms/priv/users/ann', as('ben'))).body).toEqual(cursorShape('priv', 'ann', 2));
      const missing = await get('/rooms/nowhere');
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('services/chatkit_cursors/not_found/room_not_found');
    });

    it('drops the cursors of a deleted room and of a deleted user; a re-created room or user starts afresh', async () => {
      await s.request('POST', s.chat('/users'), { body: { id: 'eve', name: 'eve' } });
      await s.request('POST', s.chat('/rooms'), { body: { id: 'temp', name: 'temp', user_ids: ['eve'] } });
      await put('temp', 'ann', { position: 50 }, as('ann'));
      await put('pub', 'eve', { position: 50 }, as('eve'));
      expect((await s.request('DELETE', s.chat('/rooms/temp', 'v2'))).status).toBe(204);
      expect((await get('/users/ann')).body.map((c: { room_id: string }) => c.room_id)).toEqual(['other', 'priv', 'pub']);
      expect((await get('/rooms/temp')).status).toBe(404);
      await s.request('POST', s.chat('/rooms'), { body: { id: 'temp', name: 'temp' } });
      expect((await get('/rooms/temp')).body).toEqual([]);
      expect((await put('temp', 'ann', { position: 5 }, as('ann'))).status).toBe(201);
      expect((await get('/rooms/temp/users/ann')).body).toEqual(cursorShape('temp', 'ann', 5));

      expect((await s.request('DELETE', s.chat('/users/eve'))).status).toBe(204);
      expect((await get('/rooms/pub')).body.map((c: { user_id: string }) => c.user_id)).not.toContain('eve');
      expect((await get('/rooms/pub/users/eve')).body).toBeNull();
      expect((await put('pub', 'eve', { position: 1 })).status).toBe(404);

      await s.request('POST', s.chat('/users'), { body: { id: 'eve', name: 'eve again' } });
      expect((await put('pub', 'eve', { position: 5 }, as('eve'))).status).toBe(201);
      expect((await get('/rooms/pub/users/eve')).body).toEqual(cursorShape('pub', 'eve', 5));
    });

    it('answers 404 for another cursor type', async () => {
      const res = await s.request('GET', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/1/users/ann`);
      expect(res.status).toBe(404);
    });
  });

  /** Both transports, through the same expectations. */
  type Opened = {
    status: number;
    body?: any;
    nextEvent<B = any>(timeoutMs?: number): Promise<SubscriptionEvent<B>>;
    quietFor(ms: number): Promise<boolean>;
    close(): Promise<void>;
  };
  const transports: [string, (path: string, token: string) => Promise<Opened>][] = [
    ['HTTP SUBSCRIBE', (path, token) => openHttpSubscription(s.baseUrl + path, bearer(token))],
    ['the /ws bridge', (path, token) => openWsSubscription(s.baseUrl, path, { Authorization: `Bearer ${token}` }, 7)],
  ];

  describe.each(transports)('subscriptions over %s', (name, open) => {
    const tag = name.startsWith('HTTP') ? 'http' : 'ws';
    const subscriptions: Opened[] = [];
    const subscribe = async (path: string, token: string) => {
      const sub = await open(cursors(path), token);
      subscriptions.push(sub);
      return sub;
    };
    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((sub) => sub.close()));
    });

    it("streams a user's cursors: initial_state, then new_cursor for each accepted set only", async () => {
      const fay = `fay-${tag}`;
      await s.request('POST', s.chat('/users'), { body: { id: fay, name: 'fay' } });
      await put('pub', fay, { position: 7 });
      const sub = await subscribe(`/users/${fay}`, as(fay));
      expect(sub.status).toBe(200);
      const initial = await sub.nextEvent();
      expect(typeof initial.id).toBe('string');
      expect(initial.body).toEqual({
        event_name: 'initial_state',
        data: { cursors: [cursorShape('pub', fay, 7)] },
        timestamp: expect.any(String),
      });

      await put('pub', fay, { position: 3 });
      await put('pub', fay, { position: 9 });
      const next = await sub.nextEvent();
      expect(next.body).toEqual({ event_name: 'new_cursor', data: cursorShape('pub', fay, 9), timestamp: expect.any(String) });
      expect(typeof next.id).toBe('string');
      expect(next.id > initial.id).toBe(true);

      await put('other', fay, { position: 1 });
      expect((await sub.nextEvent()).body.data).toEqual(cursorShape('other', fay, 1));
      // Another user's cursors are not on this stream.
      await put('other', 'ann', { position: 1000 });
      expect(await sub.quietFor(200)).toBe(true);
    });

    it("streams a room's cursors to anyone for a public room", async () => {
      const sub = await subscribe('/rooms/other', as('cat'));
      expect(sub.status).toBe(200);
      const initial = await sub.nextEvent();
      expect(initial.body.event_name).toBe('initial_state');
      const before = initial.body.data.cursors as { user_id: string; position: number }[];
      expect(before.map((c) => c.user_id)).toContain('ann');

      const annAt = before.find((c) => c.user_id === 'ann')!.position;
      const benAt = before.find((c) => c.user_id === 'ben')?.position ?? 0;
      await put('other', 'ann', { position: annAt });
      await put('other', 'ann', { position: annAt + 1 });
      await put('pub', 'ann', { position: 100_000 + annAt });
      await put('other', 'ben', { position: benAt + 1 });
      const first = await sub.nextEvent();
      const second = await sub.nextEvent();
      expect([first.body.event_name, first.body.data]).toEqual(['new_cursor', cursorShape('other', 'ann', annAt + 1)]);
      expect([second.body.event_name, second.body.data]).toEqual(['new_cursor', cursorShape('other', 'ben', benAt + 1)]);
      expect(second.id > first.id).toBe(true);
      expect(await sub.quietFor(200)).toBe(true);
    });

    it('refuses a private room to non-members and a missing room alike (404), and another user (403)', async () => {
      const outsider = await open(cursors('/rooms/priv'), as('cat'));
      expect(outsider.status).toBe(404);
      expect(outsider.body.error).toBe('services/chatkit_cursors/not_found/room_not_found');
      const missing = await open(cursors('/rooms/nowhere'), as('cat'));
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('services/chatkit_cursors/not_found/room_not_found');
      const other = await open(cursors('/users/ann'), as('ben'));
      expect(other.status).toBe(403);
      await Promise.all([outsider.close(), missing.close(), other.close()]);

      const member = await subscribe('/rooms/priv', as('ben'));
      expect(member.status).toBe(200);
      expect((await member.nextEvent()).body.data.cursors).toEqual([cursorShape('priv', 'ann', 2)]);
      const su = await subscribe('/users/ann', s.token({ su: true }));
      expect((await su.nextEvent()).body.event_name).toBe('initial_state');
    });

    it('delivers every set made while many subscriptions open, once each (no gap, no duplicate)', async () => {
      const room = `race-${tag}`;
      await s.request('POST', s.chat('/rooms'), { body: { id: room, name: room, user_ids: ['ann', 'ben'] } });
      let position = 0;
      let writing = true;
      const writer = (async () => {
        while (writing) await put(room, 'ben', { position: ++position });
      })();
      const subs = [];
      for (let i = 0; i < 5; i++) {
        subs.push(await subscribe(`/rooms/${room}`, as('ann')));
        await sleep(5);
      }
      writing = false;
      await writer;
      for (const sub of subs) {
        const initial = await sub.nextEvent();
        const seen: number[] = initial.body.data.cursors.map((c: { position: number }) => c.position);
        const last = seen[0] ?? 0;
        for (let p = last + 1; p <= position; p++) {
          const event = await sub.nextEvent();
          expect(event.body.data.position).toBe(p);
        }
        expect(await sub.quietFor(50)).toBe(true);
      }
    });
  });

  describe('a data directory written with one cursor stream per user', () => {
    it("takes each room's cursor from the legacy stream until the room's own stream has one, and lists both", async () => {
      expect((await s.request('POST', s.chat('/users'), { body: { id: 'eve.l', name: 'eve' } })).status).toBe(201);
      const userCreatedAt = (await s.request('GET', s.chat('/users/eve.l'))).body.created_at;
      const roomCreatedAt = async (id: string) => (await s.request('GET', s.chat(`/rooms/${id}`))).body.created_at;
      const legacySet = async (room_id: string, position: number, updated_at: string) => ({
        type: 'ReadCursorSet',
        data: { room_id, position, user_created_at: userCreatedAt, room_created_at: await roomCreatedAt(room_id), updated_at },
        metadata: { instance_id: s.instanceId, occurred_at: updated_at },
      });
      const events = s.server.app.get<EventStore>(EVENT_STORE);
      const appended = await events.append(
        `cursor-${s.instanceId}.eve.l`,
        [await legacySet('pub', 12, '2026-01-01T00:00:00.000Z'), await legacySet('other', 7, '2026-01-01T00:01:00.000Z'), await legacySet('pub', 30, '2026-01-01T00:02:00.000Z')],
        'no_stream',
      );
      // Appended beside the API, as the release that wrote such streams did: the read models fold it in their own time.
      await s.server.app.get<ReadYourWrites>(READ_YOUR_WRITES).waitFor(appended.position);

      // A lower position than the legacy stream's decides nothing (it appends nothing, so it answers at once).
      expect((await put('pub', 'eve.l', { position: 25 })).status).toBe(201);
      expect((await get('/rooms/pub/users/eve.l')).body).toEqual({ ...cursorShape('pub', 'eve.l', 30), updated_at: '2026-01-01T00:02:00.000Z' });
      expect((await put('pub', 'eve.l', { position: 31 })).status).toBe(201);
      expect((await get('/rooms/pub/users/eve.l')).body).toEqual(cursorShape('pub', 'eve.l', 31));
      expect((await put('pub', 'eve.l', { position: 30 })).status).toBe(201);
      expect((await put('other', 'eve.l', { position: 7 })).status).toBe(201);
      const listed = (await get('/users/eve.l')).body;
      expect(listed).toEqual([
        { ...cursorShape('other', 'eve.l', 7), updated_at: '2026-01-01T00:01:00.000Z' },
        cursorShape('pub', 'eve.l', 31),
      ]);
    });
  });
});

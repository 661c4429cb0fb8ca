import { typingChannel } from '../../src/modules/rooms/typing-channel';
import { EPHEMERAL_BUS, EphemeralBus } from '../../src/shared/ports/ephemeral-bus.port';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { openHttpSubscription, openWsSubscription, WsBridgeClient, wsUrlOf } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

const presenceState = (state: 'online' | 'offline') => ({
  event_name: 'presence_state',
  data: { state },
  timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
});

describe('typing indicators and presence', () => {
  let s: TestServer;
  let events: EventStore;
  let bus: EphemeralBus;

  beforeAll(async () => {
    // Short keep-alives: a register subscription sends no events, and an HTTP client sees
    // the stream open only once its first bytes (here the first keep-alive) arrive.
    s = await startTestServer({ env: { KEEPALIVE_INTERVAL_MS: '200' } });
    events = s.server.app.get<EventStore>(EVENT_STORE);
    bus = s.server.app.get<EphemeralBus>(EPHEMERAL_BUS);
    const users = ['ann', 'bob', 'cat'].map((id) => ({ id, name: id.toUpperCase() }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    const room = await s.request('POST', s.chat('/rooms'), {
      body: { id: 'lobby', name: 'lobby', user_ids: ['bob'] },
      token: s.token({ sub: 'ann' }),
    });
    expect(room.status).toBe(201);
  });
  afterAll(() => s.close());

  const as = (sub: string) => s.token({ sub });

  describe('POST rooms/:roomId/typing_indicators', () => {
    const typing = (roomId: string, token: string, version: 'v2' | 'v6' = 'v6') =>
      s.request('POST', s.chat(`/rooms/${roomId}/typing_indicators`, version), { token });

    it('answers 404 for a room that does not exist', async () => {
      const res = await typing('nope', as('ann'));
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('services/chatkit/not_found/room_not_found');
    });

    it('answers 403 for a user who is not a member', async () => {
      const res = await typing('lobby', as('cat'));
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('services/chatkit/forbidden/not_a_member');
      // A user that does not exist is no member either.
      expect((await typing('lobby', as('ghost'))).status).toBe(403);
    });

    it('answers 400 for a token without a user', async () => {
      const res = await typing('lobby', s.token({ su: true }));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('services/chatkit/bad_request/missing_user');
    });

    it('publishes {user_id} on the room typing channel and answers 200 with no body, on v2 and v6', async () => {
      const heard: unknown[] = [];
      const stop = bus.subscribe(typingChannel(s.instanceId, 'lobby'), (m) => heard.push(m));
      try {
        const head = await events.headPosition();
        const v6 = await typing('lobby', as('bob'));
        expect([v6.status, v6.text]).toEqual([200, '']);
        const v2 = await typing('lobby', as('ann'), 'v2');
        expect([v2.status, v2.text]).toEqual([200, '']);
        // chatkit-server style: a JSON content type with an empty body.
        const empty = await s.request('POST', s.chat('/rooms/lobby/typing_indicators'), {
          token: as('bob'),
          rawBody: '',
          headers: { 'content-type': 'application/json' },
        });
        expect(empty.status).toBe(200);
        expect(heard).toEqual([{ user_id: 'bob' }, { user_id: 'ann' }, { user_id: 'bob' }]);
        expect(await events.headPosition()).toBe(head); // ephemeral: nothing reached the log
      } finally {
        stop();
      }
    });
  });

  describe('presence', () => {
    const presencePath = (user: string) => `/services/chatkit_presence/v2/${s.instanceId}/users/${user}`;
    const registerPath = (user: string) => `${presencePath(user)}/register`;
    const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
    const http = (path: string, token: string) => openHttpSubscription(s.baseUrl + path, auth(token));

    it('follows a register subscription over HTTP SUBSCRIBE', async () => {
      const head = await events.headPosition();
      const watch = await http(presencePath('bob'), as('ann'));
      try {
        expect(watch.status).toBe(200);
        // The server's first presence subscription: just started (as after a restart), it holds a
        // first "offline" back for the restart grace (6 s) in case bob's client is reconnecting.
        const offline = await watch.nextEvent(10_000);
        expect(offline).toEqual({ id: expect.any(String), headers: {}, body: presenceState('offline') });

        const register = await http(registerPath('bob'), as('bob'));
        expect(register.status).toBe(200);
        const online = await watch.nextEvent();
        expect(online.body).toEqual(presenceState('online'));
        expect(online.id).not.toBe(offline.id);

        // A watcher opened now starts from online.
        const late = await http(presencePath('bob'), s.token({ su: true }));
        expect((await late.nextEvent()).body).toEqual(presenceState('online'));
        await late.close();

        expect(await register.quietFor(300)).toBe(true); // register sends no events
        await register.close();
        expect((await watch.nextEvent()).body).toEqual(presenceState('offline'));
        // Ephemeral: nothing reached the log (and so neither the read models nor the audit view).
        expect(await events.headPosition()).toBe(head);
      } finally {
        await watch.close();
      }
    });

    it('refuses to register someone else without su (403) and an unknown user (404) over HTTP', async () => {
      const other = await http(registerPath('bob'), as('ann'));
      expect(other.status).toBe(403);
      expect(other.body.error).toBe('services/chatkit_presence/forbidden/not_allowed');
      const ghost = await http(registerPath('ghost'), s.token({ su: true }));
      expect(ghost.status).toBe(404);
      expect(ghost.body.error).toBe('services/chatkit_presence/not_found/user_not_found');
      // su may register on a user's behalf.
      const su = await http(registerPath('cat'), s.token({ su: true }));
      expect(su.status).toBe(200);
      await su.close();
    });

    it('follows a register subscription over the /ws bridge, and ends a refused one with EOS 403', async () => {
      const head = await events.headPosition();
      const ws = await WsBridgeClient.connect(wsUrlOf(s.baseUrl));
      try {
        const watch = ws.subscribe(0, presencePath('bob'), auth(as('ann')));
        expect(await watch.next()).toEqual([101, 0, 200, {}]);
        const offline = await watch.next();
        expect(offline).toEqual([102, 0, expect.any(String), {}, presenceState('offline')]);

        const register = ws.subscribe(1, registerPath('bob'), auth(as('bob')));
        expect(await register.next()).toEqual([101, 1, 200, {}]);
        const online = await watch.next();
        expect(online).toEqual([102, 0, expect.any(String), {}, presenceState('online')]);
        expect(online[2]).not.toBe(offline[2]);

        ws.unsubscribe(1);
        expect(await watch.next()).toEqual([102, 0, expect.any(String), {}, presenceState('offline')]);

        const refused = ws.subscribe(2, registerPath('bob'), auth(as('ann')));
        expect(await refused.next()).toEqual([
          199,
          2,
          403,
          {},
          { error: 'services/chatkit_presence/forbidden/not_allowed', error_description: expect.any(String) },
        ]);
        expect(await events.headPosition()).toBe(head);
      } finally {
        await ws.close();
      }
    });

    it('ends the registrations of a /ws socket when it closes', async () => {
      const watch = await openWsSubscription(s.baseUrl, presencePath('cat'), auth(as('ann')));
      try {
        expect(watch.status).toBe(200);
        expect((await watch.nextEvent()).body).toEqual(presenceState('offline'));
        const register = await openWsSubscription(s.baseUrl, registerPath('cat'), auth(as('cat')));
        expect(register.status).toBe(200);
        expect((await watch.nextEvent()).body).toEqual(presenceState('online'));
        await register.client.close(); // the socket goes, without an UNSUBSCRIBE
        expect((await watch.nextEvent()).body).toEqual(presenceState('offline'));
      } finally {
        await watch.close();
      }
    });

    it('stays online while any of several register subscriptions is open', async () => {
      const watch = await openWsSubscription(s.baseUrl, presencePath('ann'), auth(as('bob')));
      try {
        expect((await watch.nextEvent()).body).toEqual(presenceState('offline'));
        const overWs = await openWsSubscription(s.baseUrl, registerPath('ann'), auth(as('ann')));
        const overHttp = await http(registerPath('ann'), as('ann'));
        expect((await watch.nextEvent()).body).toEqual(presenceState('online'));
        await overWs.close();
        expect(await watch.quietFor(300)).toBe(true);
        await overHttp.close();
        expect((await watch.nextEvent()).body).toEqual(presenceState('offline'));
      } finally {
        await watch.close();
      }
    });
  });
});

import { ChatServer } from '../../src/client';
import { ChatkitClients } from '../support/chatkit-client-harness';
import { openHttpSubscription, openWsSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

describe('mutes (v6)', () => {
  let s: TestServer;
  const clients = new ChatkitClients(() => s);
  const as = (sub: string) => s.token({ sub });
  const mutes = (user: string, token = as(user)) => s.request('GET', s.chat(`/users/${user}/mutes`), { token });
  const mute = (user: string, muted: string, token = as(user)) => s.request('PUT', s.chat(`/users/${user}/mutes/${muted}`), { token });
  const unmute = (user: string, muted: string, token = as(user)) => s.request('DELETE', s.chat(`/users/${user}/mutes/${muted}`), { token });
  const mutedIds = async (user: string) => {
    const listed = await mutes(user);
    expect(listed.status).toBe(200);
    return (listed.body.mutes as { user_id: string; muted_at: string }[]).map((m) => m.user_id);
  };
  const expectError = async (response: Promise<{ status: number; body: any }>, status: number, reason: string) => {
    const answer = await response;
    expect([answer.status, answer.body.error]).toEqual([status, expect.stringMatching(new RegExp(`/${reason}$`))]);
  };

  beforeAll(async () => {
    // HTTPS too: the unmodified chatkit-client connects over it (test/support/chatkit-client-harness.ts).
    s = await startTestServer({ https: true });
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'eve'].map((id) => ({ id, name: id })) } });
  });
  // Sessions first (disconnect, then window.close()), so no socket is left to reconnect to a stopped server.
  afterAll(async () => {
    clients.closeAll();
    await s?.close();
  });

  it('mutes and unmutes idempotently; the list shows who, newest first', async () => {
    expect((await mute('ann', 'ben')).status).toBe(204);
    expect((await mute('ann', 'cat')).status).toBe(204);
    expect((await mute('ann', 'ben')).status).toBe(204); // again: nothing changes
    expect(await mutedIds('ann')).toEqual(['cat', 'ben']);
    expect((await mutes('ann')).body.mutes[0]).toEqual({ user_id: 'cat', muted_at: expect.any(String) });
    expect((await unmute('ann', 'cat')).status).toBe(204);
    expect((await unmute('ann', 'cat')).status).toBe(204); // again: nothing to unmute
    expect(await mutedIds('ann')).toEqual(['ben']);
    expect(await mutedIds('ben')).toEqual([]);
  });

  it('answers bad input with a clear 4xx; only the user themselves (or su) reads or changes their mutes', async () => {
    await expectError(mute('eve', 'eve'), 422, 'cannot_mute_self');
    await expectError(mute('eve', 'nobody'), 404, 'user_not_found');
    for (const attempt of [mute('eve', 'ben', as('ben')), unmute('ann', 'ben', as('eve')), mutes('ann', as('eve'))]) {
      expect((await attempt).status).toBe(403);
    }
    expect((await s.request('GET', s.chat('/users/ann/mutes'), { token: null })).status).toBe(401);
    expect((await s.request('GET', s.chat('/users/ann/mutes', 'v2'), { token: as('ann') })).status).toBe(404);
    const su = s.token({ su: true });
    expect((await mute('eve', 'cat', su)).status).toBe(204);
    expect((await mutes('eve', su)).body.mutes.map((m: { user_id: string }) => m.user_id)).toEqual(['cat']);
    expect(await mutedIds('eve')).toEqual(['cat']);
  });

  it("shows the user's mutes in the v6 user subscription's initial state, and nothing new on v2", async () => {
    expect((await mute('cat', 'eve')).status).toBe(204);
    const auth = { authorization: `Bearer ${as('cat')}` };
    const v6 = await openHttpSubscription(`${s.baseUrl}${s.chat('/users')}`, auth);
    const v2 = await openHttpSubscription(`${s.baseUrl}${s.chat('/users', 'v2')}`, auth);
    try {
      const [six, two] = [(await v6.nextEvent()).body, (await v2.nextEvent()).body];
      expect(six).toMatchObject({ event_name: 'initial_state', data: { current_user: { id: 'cat' }, rooms: [], cursors: [], muted_user_ids: ['eve'] } });
      expect(two.event_name).toBe('initial_state');
      expect(two.data).not.toHaveProperty('muted_user_ids');
    } finally {
      await Promise.all([v6.close(), v2.close()]);
    }
  });

  it("a user's delete takes their mutes and the mutes of them; the same id created again starts with none", async () => {
    expect((await mute('ben', 'cat')).status).toBe(204);
    expect((await mute('ann', 'cat')).status).toBe(204);
    expect((await s.request('DELETE', s.chat('/users/cat'), { token: s.token({ su: true }) })).status).toBe(204);
    expect(await mutedIds('ben')).toEqual([]);
    expect(await mutedIds('ann')).toEqual(['ben']);
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'cat', name: 'cat again' } })).status).toBe(201);
    expect(await mutedIds('cat')).toEqual([]);
    // The new cat is muted only when muted anew.
    expect((await mute('ben', 'cat')).status).toBe(204);
    expect(await mutedIds('ben')).toEqual(['cat']);

    const audit = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/users/ben`, { token: s.token({ su: true }) });
    expect(JSON.stringify(audit.body)).toContain('UserMuted');
  });

  it('pushes mute changes live to every v6 user subscription of the user that asks with parley_events=mutes, each change once; nobody else sees them, and chatkit-client connected as the user goes on as before', async () => {
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['dan', 'fay', 'gus', 'hal'].map((id) => ({ id, name: id })) } });
    expect((await mute('dan', 'hal')).status).toBe(204);
    const auth = (user: string) => ({ authorization: `Bearer ${as(user)}` });
    const chat = new ChatServer({ instanceLocator: s.locator, key: `${s.keyId}:${s.secret}`, host: '127.0.0.1', port: s.server.httpPort, tls: false });
    // Two devices of dan's asking (HTTP and WebSocket), one of dan's not asking, and eve asking for her own.
    const phone = await openHttpSubscription(`${s.baseUrl}${s.chat('/users?parley_events=mutes')}`, auth('dan'));
    const laptop = await openWsSubscription(s.baseUrl, s.chat('/users?parley_events=mutes'), auth('dan'));
    const plain = await openHttpSubscription(`${s.baseUrl}${s.chat('/users')}`, auth('dan'));
    const stranger = await openHttpSubscription(`${s.baseUrl}${s.chat('/users?parley_events=mutes')}`, auth('eve'));
    const devices = [phone, laptop];
    const nextOnEach = async (subscriptions: { nextEvent: () => Promise<{ body: any }> }[]) => Promise.all(subscriptions.map(async (sub) => (await sub.nextEvent()).body));
    const dan = await clients.connect('dan');
    try {
      for (const body of await nextOnEach([...devices, plain])) {
        expect(body).toMatchObject({ event_name: 'initial_state', data: { current_user: { id: 'dan' }, muted_user_ids: ['hal'] } });
      }
      expect((await stranger.nextEvent()).body).toMatchObject({ event_name: 'initial_state', data: { current_user: { id: 'eve' } } });

      // From one device over HTTP, and on dan's behalf through Parley's chat-server client (su).
      expect((await mute('dan', 'fay')).status).toBe(204);
      const listed = (await mutes('dan')).body.mutes.find((m: { user_id: string }) => m.user_id === 'fay');
      for (const body of await nextOnEach(devices)) expect(body).toEqual({ event_name: 'user_muted', data: listed, timestamp: expect.any(String) });
      await chat.muteUser({ userId: 'dan', mutedUserId: 'gus' });
      for (const body of await nextOnEach(devices)) expect(body).toEqual({ event_name: 'user_muted', data: { user_id: 'gus', muted_at: expect.any(String) }, timestamp: expect.any(String) });

      // Muting again changes nothing and says nothing; unmuting says so, once.
      expect((await mute('dan', 'fay')).status).toBe(204);
      await chat.unmuteUser({ userId: 'dan', mutedUserId: 'fay' });
      for (const body of await nextOnEach(devices)) expect(body).toEqual({ event_name: 'user_unmuted', data: { user_id: 'fay' }, timestamp: expect.any(String) });
      expect((await unmute('dan', 'fay')).status).toBe(204);

      // A muted user's delete takes the mute: the devices hear it as an unmute, as a new connection's initial_state would show.
      expect((await s.request('DELETE', s.chat('/users/gus'), { token: s.token({ su: true }) })).status).toBe(204);
      for (const body of await nextOnEach(devices)) expect(body).toMatchObject({ event_name: 'user_unmuted', data: { user_id: 'gus' } });

      // The next thing every subscription sees is dan and eve joining a room: the one that did not ask and eve's saw no mute event.
      expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'muted-live', name: 'muted-live', user_ids: ['dan', 'eve'] }, token: as('dan') })).status).toBe(201);
      for (const body of await nextOnEach([...devices, plain, stranger])) {
        expect(body).toMatchObject({ event_name: 'added_to_room', data: { room: { id: 'muted-live' } } });
      }
      // The unmodified chatkit-client connected as dan: its hooks fire as before, no error.
      const [room] = await dan.hooks.waitFor('onAddedToRoom');
      expect(room.id).toBe('muted-live');
      expect(dan.browser.log.filter((entry) => entry.level === 'error')).toEqual([]);

      const again = await openHttpSubscription(`${s.baseUrl}${s.chat('/users?parley_events=mutes')}`, auth('dan'));
      try {
        expect((await again.nextEvent()).body.data.muted_user_ids).toEqual(['hal']);
      } finally {
        await again.close();
      }
    } finally {
      await Promise.all([phone.close(), laptop.close(), plain.close(), stranger.close()]);
    }
  });

  it('refuses parley_events a user subscription does not know with a 422 before the stream opens: an unknown family, and any on v2', async () => {
    const auth = { authorization: `Bearer ${as('ann')}` };
    for (const [query, version, unknown] of [['mutes,gossip', 'v6', 'gossip'], ['mutes', 'v2', 'mutes']] as const) {
      const sub = await openHttpSubscription(`${s.baseUrl}${s.chat(`/users?parley_events=${query}`, version)}`, auth);
      try {
        expect(sub.status).toBe(422);
        expect(sub.body).toMatchObject({ error: expect.stringContaining('invalid_parley_events'), error_description: expect.stringContaining(unknown) });
      } finally {
        await sub.close();
      }
    }
  });
});

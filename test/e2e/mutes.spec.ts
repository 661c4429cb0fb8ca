import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

describe('mutes (v6)', () => {
  let s: TestServer;
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
    s = await startTestServer();
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'eve'].map((id) => ({ id, name: id })) } });
  });
  afterAll(() => s.close());

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
});

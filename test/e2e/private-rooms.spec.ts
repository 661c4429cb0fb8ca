/**
 * A private room no stranger can take over or even find (issue 17, item 1), tried as attacks
 * with plain tokens of the `default` role on a real server.
 */
import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

describe('private rooms against a stranger with a default-role token', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const cursors = (path: string) => `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0${path}`;
  const files = (path: string) => `/services/chatkit_files/v1/${s.instanceId}${path}`;
  let messageId: number;

  beforeAll(async () => {
    s = await startTestServer();
    const users = ['alice', 'bob', 'mallory', 'mod', 'carol'].map((id) => ({ id, name: id }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    const vault = await s.request('POST', s.chat('/rooms'), { body: { id: 'vault', name: 'vault', private: true, user_ids: ['bob'] }, token: as('alice') });
    expect(vault.status).toBe(201);
    const lobby = await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['bob'] }, token: as('alice') });
    expect(lobby.status).toBe(201);
    const sent = await s.request('POST', s.chat('/rooms/vault/messages'), { body: { parts: [{ type: 'text/plain', content: 'the plan' }] }, token: as('alice') });
    expect(sent.status).toBe(201);
    messageId = sent.body.message_id;
  });
  afterAll(() => s.close());

  const members = async (roomId: string) => (await s.request('GET', s.chat(`/rooms/${roomId}`))).body.member_user_ids;

  it('cannot add themselves to a private room, nor remove its members (404, nothing changes)', async () => {
    const added = await s.request('PUT', s.chat('/rooms/vault/users/add'), { body: { user_ids: ['mallory'] }, token: as('mallory') });
    expect([added.status, added.body.error]).toEqual([404, 'services/chatkit/not_found/room_not_found']);
    const removed = await s.request('PUT', s.chat('/rooms/vault/users/remove'), { body: { user_ids: ['alice', 'bob'] }, token: as('mallory') });
    expect([removed.status, removed.body.error]).toEqual([404, 'services/chatkit/not_found/room_not_found']);
    expect(await members('vault')).toEqual(['alice', 'bob']);
    // The history stays out of reach.
    expect((await s.request('GET', s.chat('/rooms/vault/messages'), { token: as('mallory') })).status).toBe(404);
  });

  it('cannot add to or remove from a public room they are not in (403 not_a_member)', async () => {
    const added = await s.request('PUT', s.chat('/rooms/lobby/users/add'), { body: { user_ids: ['mallory'] }, token: as('mallory') });
    expect([added.status, added.body.error]).toEqual([403, 'services/chatkit/forbidden/not_a_member']);
    const removed = await s.request('PUT', s.chat('/rooms/lobby/users/remove'), { body: { user_ids: ['bob'] }, token: as('mallory') });
    expect([removed.status, removed.body.error]).toEqual([403, 'services/chatkit/forbidden/not_a_member']);
    expect(await members('lobby')).toEqual(['alice', 'bob']);
    // Joining a public room is open to anyone, as before.
    expect((await s.request('POST', s.chat('/users/mallory/rooms/lobby/join'), { token: as('mallory') })).status).toBe(200);
    expect((await s.request('POST', s.chat('/users/mallory/rooms/lobby/leave'), { token: as('mallory') })).status).toBe(200);
  });

  it('lets members, holders of a role scoped to the room, and su add and remove', async () => {
    expect((await s.request('PUT', s.chat('/rooms/vault/users/add'), { body: { user_ids: ['carol'] }, token: as('bob') })).status).toBe(204);
    expect(await members('vault')).toEqual(['alice', 'bob', 'carol']);
    expect((await s.request('PUT', s.chat('/rooms/vault/users/remove'), { body: { user_ids: ['carol'] }, token: as('bob') })).status).toBe(204);

    const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
    const role = { name: 'moderator', scope: 'room', permissions: ['room:members:add', 'room:members:remove'] };
    expect((await s.request('POST', authz('/roles'), { body: role })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/mod/roles'), { body: { name: 'moderator', room_id: 'vault' } })).status).toBe(201);
    expect((await s.request('PUT', s.chat('/rooms/vault/users/add'), { body: { user_ids: ['carol'] }, token: as('mod') })).status).toBe(204);
    expect((await s.request('PUT', s.chat('/rooms/vault/users/remove'), { body: { user_ids: ['carol'] }, token: as('mod') })).status).toBe(204);
    // The moderator of one room is a stranger to another.
    expect((await s.request('PUT', s.chat('/rooms/lobby/users/add'), { body: { user_ids: ['carol'] }, token: as('mod') })).status).toBe(403);

    expect((await s.request('PUT', s.chat('/rooms/vault/users/add'), { body: { user_ids: ['carol'] } })).status).toBe(204);
    expect((await s.request('PUT', s.chat('/rooms/vault/users/remove'), { body: { user_ids: ['carol'] } })).status).toBe(204);
    expect(await members('vault')).toEqual(['alice', 'bob']);
  });

  it('hears from every route exactly what a room that does not exist answers', async () => {
    const mallory = as('mallory');
    const text = { parts: [{ type: 'text/plain', content: 'hi' }] };
    const calls: [string, (room: string) => string, unknown?][] = [
      ['GET', (r) => s.chat(`/rooms/${r}`)],
      ['PUT', (r) => s.chat(`/rooms/${r}/users/add`), { user_ids: ['mallory'] }],
      ['PUT', (r) => s.chat(`/rooms/${r}/users/remove`), { user_ids: ['bob'] }],
      ['POST', (r) => s.chat(`/users/mallory/rooms/${r}/join`)],
      ['POST', (r) => s.chat(`/users/mallory/rooms/${r}/leave`)],
      ['POST', (r) => s.chat(`/rooms/${r}/typing_indicators`)],
      ['GET', (r) => s.chat(`/rooms/${r}/messages`)],
      ['GET', (r) => s.chat(`/rooms/${r}/messages`, 'v2')],
      ['POST', (r) => s.chat(`/rooms/${r}/messages`), text],
      ['GET', (r) => s.chat(`/rooms/${r}/messages/${messageId}`)],
      ['PUT', (r) => s.chat(`/rooms/${r}/messages/${messageId}`), text],
      ['DELETE', (r) => s.chat(`/rooms/${r}/messages/${messageId}`)],
      ['POST', (r) => s.chat(`/rooms/${r}/attachments`), { content_type: 'text/plain', content_length: 1 }],
      ['GET', (r) => s.chat(`/rooms/${r}/attachments/some-attachment`)],
      ['GET', (r) => cursors(`/rooms/${r}`)],
      ['GET', (r) => cursors(`/rooms/${r}/users/alice`)],
      ['PUT', (r) => cursors(`/rooms/${r}/users/mallory`), { position: 1 }],
      ['GET', (r) => files(`/rooms/${r}/files/plan.txt`)],
      ['DELETE', (r) => files(`/rooms/${r}/files/plan.txt`)],
    ];
    for (const [method, path, body] of calls) {
      const missing = await s.request(method, path('no-such-room'), { body, token: mallory });
      const hidden = await s.request(method, path('vault'), { body, token: mallory });
      const shape = (r: typeof missing) => [r.status, r.body?.error, String(r.body?.error_description ?? '').replaceAll('no-such-room', 'vault')];
      expect([method, path('vault'), ...shape(hidden)]).toEqual([method, path('vault'), ...shape(missing)]);
      expect([method, path('vault'), hidden.status]).toEqual([method, path('vault'), 404]);
    }
    const upload = (room: string) =>
      fetch(`${s.baseUrl}${files(`/rooms/${room}/users/mallory/files/plan.txt`)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mallory}`, 'content-type': 'text/plain' },
        body: 'x',
      }).then(async (r) => [r.status, (await r.json()).error]);
    expect(await upload('vault')).toEqual(await upload('no-such-room'));

    for (const path of [`/rooms/vault`, `/rooms/vault/memberships`]) {
      const hidden = await openHttpSubscription(s.baseUrl + s.chat(path), { authorization: `Bearer ${mallory}` });
      const missing = await openHttpSubscription(s.baseUrl + s.chat(path.replace('vault', 'no-such-room')), { authorization: `Bearer ${mallory}` });
      expect([path, hidden.status, hidden.body.error]).toEqual([path, 404, missing.body.error]);
    }
    const hiddenCursors = await openHttpSubscription(s.baseUrl + cursors('/rooms/vault'), { authorization: `Bearer ${mallory}` });
    expect([hiddenCursors.status, hiddenCursors.body.error]).toEqual([404, 'services/chatkit_cursors/not_found/room_not_found']);
    // Nothing the stranger tried changed the room.
    expect(await members('vault')).toEqual(['alice', 'bob']);
    const history = await s.request('GET', s.chat('/rooms/vault/messages'), { token: as('bob') });
    expect(history.body.map((m: { parts: { content: string }[] }) => m.parts[0].content)).toEqual(['the plan']);
  });
});

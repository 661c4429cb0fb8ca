import { startTestServer, TestServer } from '../support/test-server';

describe('rooms and memberships API', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    const users = ['ann', 'ben', 'cat', 'dan'].map((id) => ({ id, name: id.toUpperCase() }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
  });
  afterAll(() => s.close());

  const as = (sub: string) => s.token({ sub });

  it('makes a public room with a generated name from an empty body', async () => {
    const res = await s.request('POST', s.chat('/rooms', 'v2'), { rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: expect.stringMatching(/^[a-z0-9_-]{1,40}$/),
      private: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('creates a room with the token user as creator and member (v6), with a chosen id', async () => {
    const res = await s.request('POST', s.chat('/rooms'), {
      body: { id: 'general', name: 'general', private: false, user_ids: ['ben'], custom_data: { topic: 'x' } },
      token: as('ann'),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: 'general',
      created_by_id: 'ann',
      name: 'general',
      private: false,
      custom_data: { topic: 'x' },
      member_user_ids: ['ann', 'ben'],
    });
    const again = await s.request('POST', s.chat('/rooms'), { body: { id: 'general', name: 'general' } });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('services/chatkit/bad_request/room_already_exists');
  });

  it('takes the creator from created_by_id (chatkit-client) and refuses acting for someone else', async () => {
    const ok = await s.request('POST', s.chat('/rooms'), { body: { created_by_id: 'cat', name: 'cats' }, token: as('cat') });
    expect(ok.body.created_by_id).toBe('cat');
    const other = await s.request('POST', s.chat('/rooms'), { body: { created_by_id: 'ann', name: 'x' }, token: as('cat') });
    expect(other.status).toBe(403);
    const ghost = await s.request('POST', s.chat('/rooms'), { body: { name: 'x', user_ids: ['ghost'] } });
    expect(ghost.status).toBe(404);
    expect(ghost.body.error).toBe('services/chatkit/not_found/user_not_found');
  });

  it("keeps the seed's room name rule on v2, and takes free text of up to 60 characters on v6", async () => {
    const create = (name: unknown, version: 'v2' | 'v6') => s.request('POST', s.chat('/rooms', version), { body: { name } });
    for (const name of ['Has Caps', 'x'.repeat(41), 'spaces here', 'émoji', "Alice's room", '']) {
      const res = await create(name, 'v2');
      expect([name, res.status, res.body.error]).toEqual([name, 422, 'services/chatkit/unprocessable_entity/validation_failed']);
    }
    expect((await create('a_b-c'.padEnd(40, '9'), 'v2')).status).toBe(201);

    for (const name of ['Has Caps', 'x'.repeat(41), 'spaces here', 'émoji', "Alice's room", 'Ünïcödé 会議室 🎉', '🎉'.repeat(60), '']) {
      const res = await create(name, 'v6');
      expect([name, res.status]).toEqual([name, 201]);
      expect((await s.request('GET', s.chat(`/rooms/${res.body.id}`))).body.name).toBe(name);
      expect((await s.request('GET', s.chat(`/rooms/${res.body.id}`, 'v2'))).body.name).toBe(name);
    }
    for (const name of ['x'.repeat(61), '🎉'.repeat(61), 42, ['a'], { a: 1 }]) {
      const res = await create(name, 'v6');
      expect([name, res.status, res.body.error]).toEqual([name, 422, 'services/chatkit/unprocessable_entity/validation_failed']);
    }
    const over = await create('x'.repeat(61), 'v6');
    expect(over.body.error_description).toContain('at most 60 characters');

    const room = (await create('plain', 'v6')).body.id;
    const update = (name: unknown, version: 'v2' | 'v6') => s.request('PUT', s.chat(`/rooms/${room}`, version), { body: { name } });
    expect((await update("Bob's renamed room", 'v2')).status).toBe(422);
    expect((await update("Bob's renamed room", 'v6')).status).toBe(204);
    expect((await s.request('GET', s.chat(`/rooms/${room}`))).body.name).toBe("Bob's renamed room");
    expect((await update('x'.repeat(61), 'v6')).status).toBe(422);
    expect((await update('renamed-again', 'v2')).status).toBe(204);
    expect((await s.request('GET', s.chat(`/rooms/${room}`))).body.name).toBe('renamed-again');
  });

  it('gets a room by id (404 room_not_found) and hides private rooms from non-members', async () => {
    const got = await s.request('GET', s.chat('/rooms/general'), { token: as('dan') });
    expect(got.status).toBe(200);
    expect(got.body.member_user_ids).toEqual(['ann', 'ben']);
    const missing = await s.request('GET', s.chat('/rooms/nope'));
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('services/chatkit/not_found/room_not_found');

    await s.request('POST', s.chat('/rooms'), { body: { id: 'secret', name: 'secret', private: true }, token: as('ann') });
    expect((await s.request('GET', s.chat('/rooms/secret'), { token: as('dan') })).status).toBe(404);
    expect((await s.request('GET', s.chat('/rooms/secret'), { token: as('ann') })).status).toBe(200);
  });

  it('lists rooms by id after from_id, private ones only with su', async () => {
    const all = await s.request('GET', s.chat('/rooms?include_private=false'), { token: as('dan') });
    expect(all.status).toBe(200);
    const ids = all.body.map((r: { id: string }) => r.id);
    expect([...ids].sort()).toEqual(ids);
    expect(ids).not.toContain('secret');
    const after = await s.request('GET', s.chat(`/rooms?from_id=${ids[0]}`), { token: as('dan') });
    expect(after.body.map((r: { id: string }) => r.id)).toEqual(ids.slice(1));
    expect((await s.request('GET', s.chat('/rooms?include_private=true'), { token: as('dan') })).status).toBe(403);
    const withPrivate = await s.request('GET', s.chat('/rooms?include_private=true'));
    expect(withPrivate.body.map((r: { id: string }) => r.id)).toContain('secret');
  });

  it('joins and leaves public rooms; private rooms do not exist for those who would join them', async () => {
    const joined = await s.request('POST', s.chat('/users/dan/rooms/general/join', 'v2'), { token: as('dan') });
    expect(joined.status).toBe(200);
    expect(joined.body.member_user_ids).toEqual(['ann', 'ben', 'dan']);
    const twice = await s.request('POST', s.chat('/users/dan/rooms/general/join'), { token: as('dan') });
    expect(twice.body.member_user_ids).toEqual(['ann', 'ben', 'dan']);
    expect((await s.request('POST', s.chat('/users/dan/rooms/secret/join'), { token: as('dan') })).status).toBe(404);
    expect((await s.request('POST', s.chat('/users/ann/rooms/general/join'), { token: as('dan') })).status).toBe(403);
    expect((await s.request('POST', s.chat('/users/dan/rooms/nope/join'), { token: as('dan') })).status).toBe(404);

    const left = await s.request('POST', s.chat('/users/dan/rooms/general/leave'), { token: as('dan') });
    expect(left.status).toBe(200);
    expect((await s.request('GET', s.chat('/rooms/general'))).body.member_user_ids).toEqual(['ann', 'ben']);
  });

  it("lists a user's rooms and joinable rooms, as {rooms} in v2 and an array in v6", async () => {
    const v6 = await s.request('GET', s.chat('/users/ann/rooms'), { token: as('ann') });
    expect(v6.status).toBe(200);
    expect(v6.body.map((r: { id: string }) => r.id).sort()).toEqual(['general', 'secret']);
    expect(v6.body.find((r: { id: string }) => r.id === 'general').member_user_ids).toEqual(['ann', 'ben']);
    const v2 = await s.request('GET', s.chat('/users/ann/rooms', 'v2'), { token: as('ann') });
    expect(v2.body.rooms.map((r: { id: string }) => r.id).sort()).toEqual(['general', 'secret']);
    const joinable = await s.request('GET', s.chat('/users/dan/rooms?joinable=true'), { token: as('dan') });
    const joinableIds = joinable.body.map((r: { id: string }) => r.id);
    expect(joinableIds).toContain('general');
    expect(joinableIds).not.toContain('secret');
    expect((await s.request('GET', s.chat('/users/ghost/rooms'))).status).toBe(404);
  });

  it('adds and removes users (404 for unknown users or rooms)', async () => {
    expect((await s.request('PUT', s.chat('/rooms/general/users/add'), { body: { user_ids: ['cat', 'dan'] } })).status).toBe(204);
    expect((await s.request('GET', s.chat('/rooms/general'))).body.member_user_ids).toEqual(['ann', 'ben', 'cat', 'dan']);
    expect((await s.request('PUT', s.chat('/rooms/general/users/remove'), { body: { user_ids: ['cat'] } })).status).toBe(204);
    expect((await s.request('GET', s.chat('/rooms/general'))).body.member_user_ids).toEqual(['ann', 'ben', 'dan']);
    expect((await s.request('PUT', s.chat('/rooms/general/users/add'), { body: { user_ids: ['ghost'] } })).status).toBe(404);
    expect((await s.request('PUT', s.chat('/rooms/nope/users/add'), { body: { user_ids: ['ann'] } })).status).toBe(404);
    expect((await s.request('PUT', s.chat('/rooms/general/users/add'), { body: { user_ids: 'ann' } })).status).toBe(422);
  });

  it('updates a room (su) and the change shows on the next read', async () => {
    expect((await s.request('PUT', s.chat('/rooms/general'), { body: { name: 'renamed' }, token: as('ann') })).status).toBe(403);
    const res = await s.request('PUT', s.chat('/rooms/general'), { body: { name: 'renamed', custom_data: { v: 2 } } });
    expect(res.status).toBe(204);
    const got = await s.request('GET', s.chat('/rooms/general'));
    expect(got.body).toMatchObject({ name: 'renamed', custom_data: { v: 2 }, private: false });
    expect((await s.request('PUT', s.chat('/rooms/general', 'v2'), { body: { name: 'Bad Name' } })).status).toBe(422);
    expect((await s.request('PUT', s.chat('/rooms/nope'), { body: { name: 'x' } })).status).toBe(404);
  });

  it('deleting a user removes their memberships; deleting a room removes it', async () => {
    await s.request('POST', s.chat('/users'), { body: { id: 'eve', name: 'Eve' } });
    await s.request('PUT', s.chat('/rooms/general/users/add'), { body: { user_ids: ['eve'] } });
    expect((await s.request('GET', s.chat('/rooms/general'))).body.member_user_ids).toContain('eve');
    await s.request('DELETE', s.chat('/users/eve'));
    expect((await s.request('GET', s.chat('/rooms/general'))).body.member_user_ids).not.toContain('eve');
    // A new user with the same id is not a member of the old user's rooms.
    await s.request('POST', s.chat('/users'), { body: { id: 'eve', name: 'Eve 2' } });
    const joined = await s.request('POST', s.chat('/users/eve/rooms/general/join'), { token: as('eve') });
    expect(joined.body.member_user_ids).toContain('eve');

    expect((await s.request('DELETE', s.chat('/rooms/general'), { token: as('ann') })).status).toBe(403);
    expect((await s.request('DELETE', s.chat('/rooms/general'))).status).toBe(204);
    expect((await s.request('GET', s.chat('/rooms/general'))).status).toBe(404);
    const annRooms = await s.request('GET', s.chat('/users/ann/rooms'), { token: as('ann') });
    expect(annRooms.body.map((r: { id: string }) => r.id)).not.toContain('general');
  });
});

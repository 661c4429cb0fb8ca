import { openHttpSubscription, openWsSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

describe('user and membership subscriptions', () => {
  let s: TestServer;
  const as = (sub: string, su = false) => s.token({ sub, su });
  const auth = (sub: string) => ({ authorization: `Bearer ${as(sub)}` });
  const cursorsUrl = (path: string) => `/services/chatkit_cursors/v2/${s.instanceId}${path}`;

  beforeAll(async () => {
    s = await startTestServer();
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'dan'].map((id) => ({ id, name: id })) } });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'home', name: 'home', user_ids: ['ben'] }, token: as('ann') });
  });
  afterAll(() => s.close());

  it('starts the user stream with current_user, rooms (unread_count, last_message_at) and cursors', async () => {
    for (const text of ['a', 'b', 'c']) {
      await s.request('POST', s.chat('/rooms/home/messages', 'v2'), { body: { text }, token: as('ann') });
    }
    const page = await s.request('GET', s.chat('/rooms/home/messages?limit=3', 'v2'), { token: as('ben') });
    const oldest = page.body[2].id;
    expect((await s.request('PUT', cursorsUrl(`/cursors/0/rooms/home/users/ben`), { body: { position: oldest }, token: as('ben') })).status).toBe(201);

    const sub = await openWsSubscription(s.baseUrl, s.chat('/users'), auth('ben'));
    try {
      const initial = await sub.nextEvent();
      expect(initial.body.event_name).toBe('initial_state');
      expect(initial.body.data.current_user).toMatchObject({ id: 'ben', name: 'ben' });
      expect(initial.body.data.rooms).toEqual([
        expect.objectContaining({ id: 'home', unread_count: 2, last_message_at: expect.any(String), member_user_ids: ['ann', 'ben'] }),
      ]);
      expect(initial.body.data.cursors).toEqual([
        { cursor_type: 0, room_id: 'home', user_id: 'ben', position: oldest, updated_at: expect.any(String) },
      ]);
      const rooms = await s.request('GET', s.chat('/users/ben/rooms'), { token: as('ben') });
      expect(rooms.body[0].unread_count).toBe(2);
    } finally {
      await sub.close();
    }
  });

  it('streams added_to_room, room_updated, new_cursor, removed_from_room and room_deleted', async () => {
    const sub = await openHttpSubscription(`${s.baseUrl}${s.chat('/users')}`, auth('cat'));
    try {
      expect((await sub.nextEvent()).body.data.rooms).toEqual([]);
      await s.request('POST', s.chat('/rooms'), { body: { id: 'club', name: 'club', user_ids: ['cat'] }, token: as('ann') });
      const added = await sub.nextEvent();
      expect(added.body).toMatchObject({ event_name: 'added_to_room', data: { room: { id: 'club', name: 'club' } } });

      await s.request('PUT', s.chat('/rooms/club'), { body: { name: 'club2' } });
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'room_updated', data: { room: { id: 'club', name: 'club2' } } });

      const id = (await s.request('POST', s.chat('/rooms/club/messages', 'v2'), { body: { text: 'x' }, token: as('ann') })).body.message_id;
      await s.request('PUT', cursorsUrl(`/cursors/0/rooms/club/users/cat`), { body: { position: id }, token: as('cat') });
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'new_cursor', data: { room_id: 'club', user_id: 'cat', position: id } });

      await s.request('PUT', s.chat('/rooms/club/users/remove'), { body: { user_ids: ['cat'] } });
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'removed_from_room', data: { room_id: 'club' } });

      await s.request('POST', s.chat('/users/cat/rooms/club/join'), { token: as('cat') });
      expect((await sub.nextEvent()).body.event_name).toBe('added_to_room');
      await s.request('DELETE', s.chat('/rooms/club'));
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'room_deleted', data: { room_id: 'club' } });
    } finally {
      await sub.close();
    }
  });

  it('ends with 404 "user does not exist" for an unknown user, and 400 without a user', async () => {
    const ws = await openWsSubscription(s.baseUrl, s.chat('/users'), auth('ghost'));
    expect(ws.status).toBe(404);
    expect(ws.body).toEqual({ error: 'services/chatkit/not_found/user_not_found', error_description: expect.stringContaining('user does not exist') });
    await ws.close();
    const http = await openHttpSubscription(`${s.baseUrl}${s.chat('/users')}`, { authorization: `Bearer ${s.token({ su: true })}` });
    expect(http.status).toBe(400);
  });

  it('answers a path that is not valid percent-encoding with the same 400 over /ws as over HTTP', async () => {
    const path = s.chat('/rooms/%E0%A4%A/memberships', 'v2');
    const ws = await openWsSubscription(s.baseUrl, path, auth('ann'));
    const http = await openHttpSubscription(`${s.baseUrl}${path}`, auth('ann'));
    expect(ws.status).toBe(400);
    expect(http.status).toBe(400);
    expect(ws.body.error).toMatch(/bad_request\/invalid_path$/);
    expect(ws.body.error).toBe(http.body.error);
    await ws.close();
  });

  it('streams memberships: initial_state, user_joined, user_left (also when a user is deleted)', async () => {
    const sub = await openWsSubscription(s.baseUrl, s.chat('/rooms/home/memberships', 'v2'), auth('ann'));
    try {
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'initial_state', data: { user_ids: ['ann', 'ben'] } });
      await s.request('POST', s.chat('/users/dan/rooms/home/join'), { token: as('dan') });
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'user_joined', data: { user_id: 'dan' } });
      await s.request('POST', s.chat('/users/ben/rooms/home/leave'), { token: as('ben') });
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'user_left', data: { user_id: 'ben' } });
      await s.request('DELETE', s.chat('/users/dan'));
      expect((await sub.nextEvent()).body).toMatchObject({ event_name: 'user_left', data: { user_id: 'dan' } });
      expect(await sub.quietFor(100)).toBe(true);
    } finally {
      await sub.close();
    }
  });
});

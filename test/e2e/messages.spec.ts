import { startTestServer, TestServer } from '../support/test-server';

describe('messages API (v2 and v6 over one timeline)', () => {
  let s: TestServer;
  const as = (sub: string, su = false) => s.token({ sub, su });
  beforeAll(async () => {
    s = await startTestServer();
    const users = ['ann', 'ben', 'cat'].map((id) => ({ id, name: id }));
    await s.request('POST', s.chat('/batch_users'), { body: { users } });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'r1', name: 'r1', user_ids: ['ben'] }, token: as('ann') });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'r2', name: 'r2', private: true }, token: as('ann') });
  });
  afterAll(() => s.close());

  const send = (room: string, body: unknown, user = 'ann', version: 'v2' | 'v6' = 'v6') =>
    s.request('POST', s.chat(`/rooms/${room}/messages`, version), { body, token: as(user) });

  it('sends v2 and v6 messages with integer ids, strictly increasing in the room', async () => {
    const a = await send('r1', { text: 'hello' }, 'ann', 'v2');
    const b = await send('r1', { parts: [{ type: 'text/plain', content: 'multi' }] }, 'ben');
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(Number.isInteger(a.body.message_id)).toBe(true);
    expect(b.body.message_id).toBeGreaterThan(a.body.message_id);
  });

  it('shows each message through both versions', async () => {
    const v2 = await send('r1', { text: 'see', attachment: { resource_link: 'https://x.test/a.png', type: 'image' } }, 'ann', 'v2');
    const v6 = await send('r1', {
      parts: [
        { type: 'text/plain', content: 'caption' },
        { type: 'application/json', url: 'https://x.test/data.json' },
      ],
    });
    const asV6 = await s.request('GET', s.chat(`/rooms/r1/messages/${v2.body.message_id}`), { token: as('ann') });
    expect(asV6.body).toMatchObject({
      id: v2.body.message_id,
      user_id: 'ann',
      room_id: 'r1',
      parts: [
        { type: 'text/plain', content: 'see' },
        { type: 'image/x-pusher-img', url: 'https://x.test/a.png' },
      ],
    });
    const page = await s.request('GET', s.chat('/rooms/r1/messages?limit=2', 'v2'), { token: as('ann') });
    expect(page.body).toEqual([
      {
        id: v6.body.message_id,
        user_id: 'ann',
        room_id: 'r1',
        text: 'caption',
        attachment: { resource_link: 'https://x.test/data.json', type: 'file', name: 'data.json' },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
      {
        id: v2.body.message_id,
        user_id: 'ann',
        room_id: 'r1',
        text: 'see',
        attachment: { resource_link: 'https://x.test/a.png', type: 'image', name: 'a.png' },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
  });

  it('pages with initial_id (exclusive), direction and limit', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await send('r1', { text: `p${i}` }, 'ben', 'v2')).body.message_id);
    const older = await s.request('GET', s.chat(`/rooms/r1/messages?initial_id=${ids[3]}&limit=2`, 'v2'), { token: as('ben') });
    expect(older.body.map((m: { id: number }) => m.id)).toEqual([ids[2], ids[1]]);
    const newer = await s.request('GET', s.chat(`/rooms/r1/messages?initial_id=${ids[1]}&direction=newer&limit=2`), {
      token: as('ben'),
    });
    expect(newer.body.map((m: { id: number }) => m.id)).toEqual([ids[2], ids[3]]);
    const trailing = await s.request('GET', s.chat('/rooms/r1/messages?'), { token: as('ben') });
    expect(trailing.status).toBe(200);
    expect(trailing.body.length).toBeLessThanOrEqual(20);
    for (const q of ['limit=0', 'limit=101', 'direction=sideways', 'initial_id=abc']) {
      expect((await s.request('GET', s.chat(`/rooms/r1/messages?${q}`), { token: as('ben') })).status).toBe(422);
    }
  });

  it('refuses non-members, unknown rooms, bad bodies and oversized inline content', async () => {
    expect((await send('r1', { text: 'hi' }, 'cat', 'v2')).status).toBe(403);
    expect((await send('nope', { text: 'hi' }, 'ann', 'v2')).status).toBe(404);
    expect((await send('r1', { parts: [] })).status).toBe(422);
    expect((await send('r1', { parts: [{ type: 'text/plain', content: 'a', url: 'b' }] })).status).toBe(422);
    expect((await send('r1', { text: 5 }, 'ann', 'v2')).status).toBe(422);
    const big = await send('r1', { parts: [{ type: 'text/plain', content: 'x'.repeat(5000) }] });
    expect(big.status).toBe(413);
    expect(big.body.error).toContain('message_size_limit_exceeded');
    // r2 is private: to a non-member it does not exist.
    expect((await s.request('GET', s.chat('/rooms/r2/messages'), { token: as('cat') })).status).toBe(404);
  });

  it('edits (sender or su) and deletes: v6 removes the message, the v2 route leaves a DELETED tombstone', async () => {
    const id = (await send('r1', { text: 'draft' }, 'ann', 'v2')).body.message_id;
    expect((await s.request('PUT', s.chat(`/rooms/r1/messages/${id}`, 'v2'), { body: { text: 'x' }, token: as('ben') })).status).toBe(403);
    expect((await s.request('PUT', s.chat(`/rooms/r1/messages/${id}`, 'v2'), { body: { text: 'final' }, token: as('ann') })).status).toBe(204);
    expect((await s.request('GET', s.chat(`/rooms/r1/messages/${id}`, 'v6'))).body.parts).toEqual([
      { type: 'text/plain', content: 'final' },
    ]);

    expect((await s.request('DELETE', s.chat(`/rooms/r1/messages/${id}`))).status).toBe(204);
    const afterV6Delete = await s.request('GET', s.chat('/rooms/r1/messages?limit=100', 'v2'));
    expect(afterV6Delete.body.map((m: { id: number }) => m.id)).not.toContain(id);
    expect((await s.request('GET', s.chat(`/rooms/r1/messages/${id}`))).status).toBe(404);

    const other = (await send('r1', { text: 'secret' }, 'ben', 'v2')).body.message_id;
    expect((await s.request('DELETE', s.chat(`/messages/${other}`, 'v2'), { token: as('ann') })).status).toBe(403);
    expect((await s.request('DELETE', s.chat(`/messages/${other}`, 'v2'))).status).toBe(204);
    const tomb = await s.request('GET', s.chat('/rooms/r1/messages?limit=1', 'v2'));
    expect(tomb.body[0]).toMatchObject({ id: other, text: 'DELETED' });
    expect(JSON.stringify(tomb.body)).not.toContain('secret');
    expect((await s.request('DELETE', s.chat(`/messages/${other}`, 'v2'))).status).toBe(404);
  });

  it('chat API v5 serves the message delete of chatkit-client\'s own test suite (as v6 does), and no other route', async () => {
    const v5 = (path: string) => `/services/chatkit/v5/${s.instanceId}${path}`;
    const id = (await send('r1', { text: 'v5 target' }, 'ben', 'v2')).body.message_id;
    const stranger = await s.request('DELETE', v5(`/rooms/r1/messages/${id}`), { token: as('cat') });
    expect(stranger.status).toBe(403);
    expect((await s.request('DELETE', v5(`/rooms/r1/messages/${id}`), { token: null })).status).toBe(401);
    expect((await s.request('DELETE', v5(`/rooms/r1/messages/${id}`))).status).toBe(204);
    expect((await s.request('GET', s.chat(`/rooms/r1/messages/${id}`))).status).toBe(404);
    const page = await s.request('GET', s.chat('/rooms/r1/messages?limit=100', 'v2'));
    expect(page.body.map((m: { id: number }) => m.id)).not.toContain(id);
    const again = await s.request('DELETE', v5(`/rooms/r1/messages/${id}`));
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('services/chatkit/not_found/message_not_found');

    for (const [method, path] of [
      ['GET', `/rooms/r1/messages/${id}`],
      ['GET', '/rooms/r1/messages'],
      ['POST', '/rooms/r1/messages'],
      ['DELETE', '/rooms/r1'],
      ['GET', '/users/ann'],
    ]) {
      const res = await s.request(method, v5(path), { body: method === 'POST' ? { text: 'x' } : undefined });
      expect([method, path, res.status, res.body.error]).toEqual([method, path, 404, 'services/chatkit/not_found/route_not_found']);
      expect(res.body.error_description).toContain('v5 serves only DELETE /rooms/:roomId/messages/:messageId');
    }
  });

  it('keeps ids unique across rooms of the instance and carries last_message_at on rooms', async () => {
    await s.request('PUT', s.chat('/rooms/r2/users/add'), { body: { user_ids: ['ben'] } });
    const x = (await send('r2', { text: 'in r2' }, 'ben', 'v2')).body;
    const y = (await send('r1', { text: 'in r1' }, 'ben', 'v2')).body;
    expect(x.message_id).not.toBe(y.message_id);
    const rooms = await s.request('GET', s.chat('/users/ben/rooms'), { token: as('ben') });
    for (const room of rooms.body) expect(room.last_message_at).toEqual(expect.any(String));
  });

  it('deleting a room deletes its messages', async () => {
    await s.request('POST', s.chat('/rooms'), { body: { id: 'gone', name: 'gone' }, token: as('ann') });
    await send('gone', { text: 'bye' });
    expect((await s.request('DELETE', s.chat('/rooms/gone'))).status).toBe(204);
    await s.request('POST', s.chat('/rooms'), { body: { id: 'gone', name: 'gone' }, token: as('ann') });
    expect((await s.request('GET', s.chat('/rooms/gone/messages'), { token: as('ann') })).body).toEqual([]);
  });
});

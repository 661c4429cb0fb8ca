import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

describe('pinned messages (v6)', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const su = () => s.token({ su: true });
  const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
  const pin = (room: string, id: number, user: string, body?: object) =>
    s.request('PUT', s.chat(`/rooms/${room}/messages/${id}/pin`), { token: as(user), ...(body && { body }) });
  const unpin = (room: string, id: number, user: string) => s.request('DELETE', s.chat(`/rooms/${room}/messages/${id}/pin`), { token: as(user) });
  const pins = async (room: string, user = 'ben') => {
    const listed = await s.request('GET', s.chat(`/rooms/${room}/pins`), { token: as(user) });
    expect(listed.status).toBe(200);
    return listed.body.pins as { message_id: number; pinned_by?: string; pinned_at: string; until?: string; message: any }[];
  };
  const send = async (room: string, text: string, user = 'ann') =>
    (await s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content: text }] }, token: as(user) })).body
      .message_id as number;
  const createRoom = async (id: string, extra: object = {}) =>
    expect((await s.request('POST', s.chat('/rooms'), { body: { id, name: id, user_ids: ['ben', 'cat'], ...extra }, token: as('ann') })).status).toBe(201);
  const expectError = async (response: Promise<{ status: number; body: any }>, status: number, reason: string) => {
    const answer = await response;
    expect([answer.status, answer.body.error]).toEqual([status, `services/chatkit/${reason}`]);
  };

  beforeAll(async () => {
    s = await startTestServer();
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'eve'].map((id) => ({ id, name: id })) } });
  });
  afterAll(() => s.close());

  it('pins and unpins idempotently; the room lists its pins newest first, each with its message', async () => {
    await createRoom('board');
    const first = await send('board', 'first');
    const second = await send('board', 'second');
    expect((await pin('board', first, 'ben')).status).toBe(204);
    expect((await pin('board', second, 'cat')).status).toBe(204);
    expect((await pin('board', first, 'ben')).status).toBe(204); // again: nothing changes

    const listed = await pins('board');
    expect(listed.map((p) => [p.message_id, p.pinned_by])).toEqual([
      [second, 'cat'],
      [first, 'ben'],
    ]);
    expect(listed[0]).toEqual({
      message_id: second,
      pinned_by: 'cat',
      pinned_at: expect.any(String),
      message: expect.objectContaining({ id: second, user_id: 'ann', room_id: 'board', parts: [{ type: 'text/plain', content: 'second' }] }),
    });

    expect((await unpin('board', second, 'ben')).status).toBe(204);
    expect((await unpin('board', second, 'ben')).status).toBe(204); // again: nothing to unpin
    expect((await pins('board')).map((p) => p.message_id)).toEqual([first]);
  });

  it('a pin with an until shows until then, and pinning again changes it', async () => {
    await createRoom('timed');
    const id = await send('timed', 'for a moment');
    const soon = new Date(Date.now() + 1500).toISOString();
    expect((await pin('timed', id, 'ben', { until: soon })).status).toBe(204);
    expect((await pins('timed'))[0]).toMatchObject({ message_id: id, until: soon });
    await eventually(async () => (await pins('timed')).length === 0, { what: 'the pin past its until left the list' });

    const later = new Date(Date.now() + 3_600_000).toISOString();
    expect((await pin('timed', id, 'ben', { until: later })).status).toBe(204);
    expect((await pins('timed'))[0].until).toBe(later);
    expect((await pin('timed', id, 'ben')).status).toBe(204); // no until: pinned until unpinned
    expect((await pins('timed'))[0]).not.toHaveProperty('until');
  });

  it('answers bad input with a clear 4xx and stores nothing', async () => {
    await createRoom('strict');
    await createRoom('elsewhere');
    const id = await send('strict', 'x');
    await expectError(pin('strict', id, 'ben', { until: new Date(Date.now() - 1000).toISOString() }), 422, 'unprocessable_entity/invalid_until');
    await expectError(pin('strict', id, 'ben', { until: 'tomorrow' }), 422, 'unprocessable_entity/invalid_until');
    await expectError(pin('strict', 999_999, 'ben'), 404, 'not_found/message_not_found');
    await expectError(pin('elsewhere', id, 'ben'), 404, 'not_found/message_not_found');
    await expectError(pin('strict', id, 'eve'), 403, 'forbidden/not_a_member');
    const deleted = await send('strict', 'gone');
    expect((await s.request('DELETE', s.chat(`/rooms/strict/messages/${deleted}`), { token: as('ann') })).status).toBe(204);
    await expectError(pin('strict', deleted, 'ben'), 404, 'not_found/message_not_found');
    expect((await s.request('PUT', s.chat(`/rooms/strict/messages/${id}/pin`, 'v2'), { token: as('ben') })).status).toBe(404);
    expect(await pins('strict')).toEqual([]);

    // Fifty pins fit; a fifty-first does not, until one goes.
    const ids: number[] = [];
    for (let i = 0; i < 51; i++) ids.push(await send('strict', `m${i}`));
    for (const m of ids.slice(0, 50)) expect((await pin('strict', m, 'ben')).status).toBe(204);
    await expectError(pin('strict', ids[50], 'ben'), 422, 'unprocessable_entity/too_many_pins');
    expect((await unpin('strict', ids[0], 'ben')).status).toBe(204);
    expect((await pin('strict', ids[50], 'ben')).status).toBe(204);
    expect(await pins('strict')).toHaveLength(50);
  });

  it('needs message:pin to pin and room:messages:get to list; su needs neither, nor membership', async () => {
    await createRoom('guarded');
    const id = await send('guarded', 'x');
    expect((await s.request('POST', authz('/roles'), { body: { name: 'no-pins', scope: 'global', permissions: ['room:messages:get', 'room:get'] } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/cat/roles'), { body: { name: 'no-pins' } })).status).toBe(201);
    const refused = await pin('guarded', id, 'cat');
    expect([refused.status, refused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect(refused.body.error_description).toContain('message:pin');
    const unpinRefused = await unpin('guarded', id, 'cat');
    expect([unpinRefused.status, unpinRefused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect(await pins('guarded', 'cat')).toEqual([]);
    expect((await s.request('DELETE', authz('/users/cat/roles'))).status).toBe(204);

    expect((await s.request('PUT', s.chat(`/rooms/guarded/messages/${id}/pin`), { token: su() })).status).toBe(204);
    const [byKey] = await pins('guarded');
    expect(byKey.message_id).toBe(id);
    expect(byKey).not.toHaveProperty('pinned_by');
    await s.request('POST', s.chat('/rooms'), { body: { id: 'hidden', name: 'hidden', private: true }, token: as('ann') });
    expect((await s.request('GET', s.chat('/rooms/hidden/pins'), { token: as('eve') })).status).toBe(404);
  });

  it('tells room subscriptions that ask (parley_events=pins) about pins live, and nothing new to others', async () => {
    await createRoom('live');
    const auth = { authorization: `Bearer ${as('ben')}` };
    const asking = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/live?message_limit=0&parley_events=pins,reactions')}`, auth);
    const plain = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/live?message_limit=0')}`, auth);
    try {
      const id = await send('live', 'pin me');
      for (const sub of [asking, plain]) expect((await sub.nextEvent()).body.data.id).toBe(id);
      expect((await pin('live', id, 'cat')).status).toBe(204);
      expect((await unpin('live', id, 'cat')).status).toBe(204);
      expect((await asking.nextEvent()).body).toEqual({
        event_name: 'message_pinned',
        data: { message_id: id, pinned_by: 'cat', pinned_at: expect.any(String) },
        timestamp: expect.any(String),
      });
      expect((await asking.nextEvent()).body).toMatchObject({ event_name: 'message_unpinned', data: { message_id: id } });
      const next = await send('live', 'after the pins');
      expect((await plain.nextEvent()).body).toMatchObject({ event_name: 'new_message', data: { id: next } });
    } finally {
      await Promise.all([asking.close(), plain.close()]);
    }
  });

  it('goes with its message and its room (a room created again has none), and the audit trail shows it', async () => {
    await createRoom('fleeting');
    const kept = await send('fleeting', 'kept');
    const gone = await send('fleeting', 'gone');
    expect((await pin('fleeting', kept, 'ben')).status).toBe(204);
    expect((await pin('fleeting', gone, 'ben')).status).toBe(204);
    expect((await s.request('DELETE', s.chat(`/rooms/fleeting/messages/${gone}`), { token: as('ann') })).status).toBe(204);
    expect((await pins('fleeting')).map((p) => p.message_id)).toEqual([kept]);

    const audit = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/fleeting`, { token: su() });
    expect(JSON.stringify(audit.body)).toContain('MessagePinned');

    expect((await s.request('DELETE', s.chat('/rooms/fleeting'), { token: su() })).status).toBe(204);
    await createRoom('fleeting');
    expect(await pins('fleeting')).toEqual([]);
    // The new room's pins count from none: unpinning the old room's message changes nothing.
    expect((await unpin('fleeting', kept, 'ben')).status).toBe(204);
    const fresh = await send('fleeting', 'new');
    expect((await pin('fleeting', fresh, 'ben')).status).toBe(204);
    expect((await pins('fleeting')).map((p) => p.message_id)).toEqual([fresh]);
  });

  it("lists a pinned thread-only reply with its parent_id, and a pinned thread's first message with its summary; the reply's delete takes its pin", async () => {
    await createRoom('threaded');
    const parent = await send('threaded', 'parent');
    const replied = await s.request('POST', s.chat(`/rooms/threaded/messages/${parent}/replies`), {
      body: { parts: [{ type: 'text/plain', content: 'a reply worth pinning' }] },
      token: as('ben'),
    });
    expect(replied.status).toBe(201);
    const reply = replied.body.message_id as number;
    expect((await pin('threaded', parent, 'cat')).status).toBe(204);
    expect((await pin('threaded', reply, 'cat')).status).toBe(204);

    const listed = await pins('threaded');
    expect(listed.map((p) => p.message_id)).toEqual([reply, parent]);
    expect(listed[0].message).toMatchObject({ id: reply, user_id: 'ben', parent_id: parent, parts: [{ type: 'text/plain', content: 'a reply worth pinning' }] });
    expect(listed[1].message.thread).toEqual({ reply_count: 1, last_reply_at: listed[0].message.created_at, participants: ['ann', 'ben'] });

    expect((await s.request('DELETE', s.chat(`/rooms/threaded/messages/${reply}`), { token: as('ben') })).status).toBe(204);
    const left = await pins('threaded');
    expect(left.map((p) => [p.message_id, p.message.thread])).toEqual([[parent, undefined]]);
  });
});

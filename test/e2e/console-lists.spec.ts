import jwt from 'jsonwebtoken';
import { randomBytes } from 'node:crypto';
import { READ_MODEL_STORE, ReadModelStore } from '../../src/shared/ports/read-model-store.port';
import { WEBHOOK_DELIVERIES } from '../../src/modules/webhooks/deliver-webhooks/webhook-deliveries';
import { startTestServer, TestServer } from '../support/test-server';

/**
 * The console's paged lists on a real server (the embedded default): a room (without its member
 * ids) and its members a page at a time, the read cursors of a room or a user a page at a time,
 * a message's history from the audit API, Feeds by prefix and a webhook's delivery log a page at
 * a time. su tokens of the instance only.
 */
describe('console lists (parley_admin rooms/members, cursors, feeds; parley_audit messages; parley_webhooks deliveries)', () => {
  let s: TestServer;
  const admin = (path: string) => `/services/parley_admin/v1/${s.instanceId}${path}`;
  const audit = (path: string) => `/services/parley_audit/v1/${s.instanceId}${path}`;
  const ok = async (answer: Promise<{ status: number; text: string; body: any }>) => {
    const res = await answer;
    if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
    return res.body;
  };
  const members = Array.from({ length: 7 }, (_, i) => `member-${i}`);
  const sent: Record<string, number> = {};
  const secret = `MARKER-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    s = await startTestServer({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    await ok(s.request('POST', s.chat('/batch_users'), { body: { users: [...members, 'owner', 'other'].map((id) => ({ id, name: id })) } }));
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'big', name: 'Big', user_ids: [...members].reverse() }, token: s.token({ sub: 'owner' }) }));
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'side', name: 'Side', user_ids: ['member-0'] }, token: s.token({ sub: 'owner' }) }));
    for (const user of members.slice(0, 5)) {
      await ok(s.request('PUT', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/rooms/big/users/${user}`, { body: { position: 3 } }));
    }
    await ok(s.request('PUT', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/rooms/side/users/member-0`, { body: { position: 1 } }));
    const send = async (name: string, room: string, content: string) => {
      sent[name] = (await ok(s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content }] }, token: s.token({ sub: 'member-0' }) }))).message_id;
    };
    await send('before', 'big', 'before');
    await send('watched', 'big', secret);
    await send('elsewhere', 'side', 'elsewhere');
    await send('after', 'big', 'after');
  }, 60_000);
  afterAll(() => s?.close());

  it('answers su tokens of the instance only', async () => {
    const paths = [admin('/feeds'), admin('/rooms/big'), admin('/rooms/big/members'), admin('/rooms/big/cursors'), admin('/users/member-0/cursors'), admin('/users/member-0/rooms'), audit(`/messages/${sent.watched}`)];
    const otherInstance = jwt.sign({ instance: 'another-instance', iss: `api_keys/${s.keyId}`, su: true }, s.secret, { algorithm: 'HS256', expiresIn: 600 });
    for (const path of paths) {
      expect([path, (await s.request('GET', path, { token: null })).status]).toEqual([path, 401]);
      expect([path, (await s.request('GET', path, { token: otherInstance })).status]).toEqual([path, 401]);
      const asUser = await s.request('GET', path, { token: s.token({ sub: 'member-0' }) });
      expect([path, asUser.status, asUser.body.error]).toEqual([path, 403, expect.stringMatching(/\/forbidden\/su_required$/)]);
      expect(asUser.text).not.toContain('member-1');
    }
  });

  it("shows a room with its member count and without its member ids", async () => {
    const room = await ok(s.request('GET', admin('/rooms/big')));
    expect(room).toEqual({ id: 'big', name: 'Big', private: false, created_by_id: 'owner', member_count: 8, created_at: expect.any(String), updated_at: expect.any(String) });
    expect((await s.request('GET', admin('/rooms/nowhere'))).body.error).toBe('services/parley_admin/not_found/room_not_found');
  });

  it("pages through a room's members by user id", async () => {
    const first = await ok(s.request('GET', admin('/rooms/big/members?limit=3')));
    expect(first).toEqual({
      members: ['member-0', 'member-1', 'member-2'].map((user_id) => ({ user_id, joined_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })),
      next: 'member-2',
    });
    const second = await ok(s.request('GET', admin(`/rooms/big/members?limit=3&after=${first.next}`)));
    expect(second.members.map((m: any) => m.user_id)).toEqual(['member-3', 'member-4', 'member-5']);
    const last = await ok(s.request('GET', admin(`/rooms/big/members?limit=3&after=${second.next}`)));
    expect(last).toEqual({ members: [expect.objectContaining({ user_id: 'member-6' }), expect.objectContaining({ user_id: 'owner' })] });
    expect((await ok(s.request('GET', admin('/rooms/big/members')))).members).toHaveLength(8);
    // A member removed is gone from the pages.
    await ok(s.request('PUT', s.chat('/rooms/big/users/remove'), { body: { user_ids: ['member-1'] } }));
    expect((await ok(s.request('GET', admin('/rooms/big/members?limit=2')))).members.map((m: any) => m.user_id)).toEqual(['member-0', 'member-2']);
    await ok(s.request('PUT', s.chat('/rooms/big/users/add'), { body: { user_ids: ['member-1'] } }));

    expect((await s.request('GET', admin('/rooms/big/members?limit=101'))).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_limit');
    expect((await s.request('GET', admin('/rooms/big/members?after=a&after=b'))).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_after');
    expect((await s.request('GET', admin('/rooms/nowhere/members'))).body.error).toBe('services/parley_admin/not_found/room_not_found');
  });

  it("pages through a user's rooms by room id, without their member ids", async () => {
    const first = await ok(s.request('GET', admin('/users/member-0/rooms?limit=1')));
    expect(first).toEqual({ rooms: [{ id: 'big', name: 'Big', private: false, joined_at: expect.any(String) }], next: 'big' });
    expect(await ok(s.request('GET', admin(`/users/member-0/rooms?limit=1&after=${first.next}`)))).toEqual({ rooms: [{ id: 'side', name: 'Side', private: false, joined_at: expect.any(String) }] });
    expect(await ok(s.request('GET', admin('/users/nobody/rooms')))).toEqual({ rooms: [] });
    expect((await s.request('GET', admin('/users/member-0/rooms?limit=0'))).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_limit');
  });

  it('pages through the read cursors of a room (by user id) and of a user (by room id)', async () => {
    const cursor = (room_id: string, user_id: string, position: number) => ({ cursor_type: 0, room_id, user_id, position, updated_at: expect.any(String) });
    const first = await ok(s.request('GET', admin('/rooms/big/cursors?limit=2')));
    expect(first).toEqual({ cursors: [cursor('big', 'member-0', 3), cursor('big', 'member-1', 3)], next: 'member-1' });
    const rest = await ok(s.request('GET', admin(`/rooms/big/cursors?after=${first.next}`)));
    expect(rest).toEqual({ cursors: ['member-2', 'member-3', 'member-4'].map((u) => cursor('big', u, 3)) });
    const ofUser = await ok(s.request('GET', admin('/users/member-0/cursors?limit=1')));
    expect(ofUser).toEqual({ cursors: [cursor('big', 'member-0', 3)], next: 'big' });
    expect(await ok(s.request('GET', admin(`/users/member-0/cursors?limit=1&after=big`)))).toEqual({ cursors: [cursor('side', 'member-0', 1)] });
    expect(await ok(s.request('GET', admin('/users/nobody/cursors')))).toEqual({ cursors: [] });
    expect((await s.request('GET', admin('/rooms/nowhere/cursors'))).body.error).toBe('services/parley_admin/not_found/room_not_found');
    expect((await s.request('GET', admin('/rooms/big/cursors?limit=0'))).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_limit');
  });

  it("answers a message's history: its send, edits, deletion and the recorded reads of its content, paged", async () => {
    const id = sent.watched;
    // One content read that shows it, one that does not (a page of the newest message only).
    await ok(s.request('GET', admin(`/rooms/big/messages?content=true&before=${sent.after}&limit=1`)));
    await ok(s.request('GET', admin(`/rooms/big/messages?content=true&limit=1`)));
    await ok(s.request('PUT', `/services/chatkit/v6/${s.instanceId}/rooms/big/messages/${id}`, { body: { parts: [{ type: 'text/plain', content: 'edited' }] }, token: s.token({ sub: 'member-0' }) }));
    await ok(s.request('DELETE', `/services/chatkit/v6/${s.instanceId}/rooms/big/messages/${id}`, { token: s.token({ sub: 'member-0' }) }));

    const history = await ok(s.request('GET', audit(`/messages/${id}`)));
    expect(history.events.map((e: any) => e.type)).toEqual(['MessageSent', 'MessageContentRead', 'MessageEdited', 'MessageDeleted']);
    expect(history.next).toBeNull();
    expect(history.events[0]).toEqual(expect.objectContaining({ stream: `messages-${s.instanceId}.big`, data: expect.objectContaining({ id, user_id: 'member-0' }) }));
    expect(history.events[1].data).toEqual(expect.objectContaining({ room_id: 'big', first_message_id: id, last_message_id: id }));
    for (const event of history.events.slice(2)) expect(event.stream).toBe(`message-${s.instanceId}.${id}`);
    const positions = history.events.map((e: any) => e.position);
    expect([...positions].sort()).toEqual(positions);

    // Paged: the pages put together are the whole history.
    const first = await ok(s.request('GET', audit(`/messages/${id}?limit=2`)));
    expect(first.events.map((e: any) => e.type)).toEqual(['MessageSent', 'MessageContentRead']);
    const second = await ok(s.request('GET', audit(`/messages/${id}?limit=2&from=${first.next}`)));
    expect(second.events.map((e: any) => e.type)).toEqual(['MessageEdited', 'MessageDeleted']);
    expect(second.next).toBeNull();

    // Another message's history names none of these.
    const other = await ok(s.request('GET', audit(`/messages/${sent.elsewhere}`)));
    expect(other.events.map((e: any) => [e.type, e.data.id])).toEqual([['MessageSent', sent.elsewhere]]);
    const before = await ok(s.request('GET', audit(`/messages/${sent.before}`)));
    expect(before.events.map((e: any) => e.type)).toEqual(['MessageSent']);

    expect((await s.request('GET', audit('/messages/999999'))).body.error).toBe('services/parley_audit/not_found/message_not_found');
    expect((await s.request('GET', audit('/messages/abc'))).body.error).toBe('services/parley_audit/unprocessable_entity/invalid_message_id');
    expect((await s.request('GET', audit(`/messages/${id}?from=x`))).body.error).toBe('services/parley_audit/unprocessable_entity/invalid_from');
  });

  it("finds a deleted room's message by the room_id it is given", async () => {
    await ok(s.request('POST', s.chat('/rooms'), { body: { id: 'doomed', name: 'Doomed', user_ids: ['member-0'] }, token: s.token({ sub: 'owner' }) }));
    const id = (await ok(s.request('POST', s.chat('/rooms/doomed/messages'), { body: { parts: [{ type: 'text/plain', content: 'bye' }] }, token: s.token({ sub: 'member-0' }) }))).message_id;
    expect((await ok(s.request('GET', audit(`/messages/${id}`)))).events.map((e: any) => e.type)).toEqual(['MessageSent']);
    await ok(s.request('DELETE', s.chat('/rooms/doomed')));
    expect((await s.request('GET', audit(`/messages/${id}`))).status).toBe(404);
    expect((await ok(s.request('GET', audit(`/messages/${id}?room_id=doomed`)))).events.map((e: any) => e.type)).toEqual(['MessageSent']);
  });

  it('pages through the Feeds that hold items, by id prefix', async () => {
    const now = Math.floor(Date.now() / 1000);
    const feedsToken = jwt.sign({ app: s.instanceId, iss: `api_keys/${s.keyId}`, iat: now - 60, exp: now + 600, feeds: { permission: { path: '*', action: '*' } } }, s.secret);
    for (const feed of ['news-a', 'news-b', 'news-c', 'other']) {
      await ok(s.request('POST', `/services/feeds/v1/${s.instanceId}/feeds/${feed}/items`, { body: { items: [{ n: 1 }, { n: 2 }] }, token: feedsToken }));
    }
    const first = await ok(s.request('GET', admin('/feeds?prefix=news&limit=2')));
    expect(first).toEqual({ feeds: [{ id: 'news-a', item_count: 2 }, { id: 'news-b', item_count: 2 }], next: 'news-b' });
    expect(await ok(s.request('GET', admin(`/feeds?prefix=news&limit=2&after=${first.next}`)))).toEqual({ feeds: [{ id: 'news-c', item_count: 2 }] });
    expect((await ok(s.request('GET', admin('/feeds?after=news-c')))).feeds.map((f: any) => f.id)).toEqual(['other']);
    expect((await ok(s.request('GET', admin('/feeds')))).feeds).toHaveLength(4);
    expect((await s.request('GET', admin('/feeds?prefix=a%20b'))).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_prefix');
    expect((await s.request('GET', admin('/feeds?limit=101'))).body.error).toBe('services/parley_admin/unprocessable_entity/invalid_limit');
  });

  it("pages through a webhook's delivery log, newest first, deliveries of the same moment included", async () => {
    const hooks = `/services/parley_webhooks/v1/${s.instanceId}/webhooks`;
    // A webhook for an event nothing here causes: its log holds what is written below only.
    const { id } = await ok(s.request('POST', hooks, { body: { url: 'http://127.0.0.1:9/hook', secret: 'the-secret', event_types: ['v1.users_deleted'] } }));
    const store = s.server.app.get<ReadModelStore>(READ_MODEL_STORE);
    const moments = ['2026-01-01T00:00:01.000Z', '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:03.000Z'];
    await store.applyBatch(
      moments.map((delivered_at, i) => ({
        collection: WEBHOOK_DELIVERIES,
        kind: 'put' as const,
        position: '00000000000000000001',
        document: { _id: `${id}-d${i}`, instance_id: s.instanceId, webhook_id: id, event_id: `e${i}`, event_type: 'v1.users_deleted', position: String(i), after_position: null, status: 'delivered', attempts: 1, response_code: 200, delivered_at },
      })),
      {},
    );
    const ids = (page: any[]) => page.map((d) => d.id.slice(id.length + 1));
    const first = (await ok(s.request('GET', `${hooks}/${id}/deliveries?limit=2`))) as any[];
    expect(ids(first)).toEqual(['d4', 'd3']);
    const second = (await ok(s.request('GET', `${hooks}/${id}/deliveries?limit=2&before=${first[1].id}`))) as any[];
    expect(ids(second)).toEqual(['d2', 'd1']);
    expect(ids(await ok(s.request('GET', `${hooks}/${id}/deliveries?limit=2&before=${second[1].id}`)))).toEqual(['d0']);
    expect(ids(await ok(s.request('GET', `${hooks}/${id}/deliveries?before=${first[0].id}`)))).toEqual(['d3', 'd2', 'd1', 'd0']);
    expect(ids(await ok(s.request('GET', `${hooks}/${id}/deliveries`)))).toEqual(['d4', 'd3', 'd2', 'd1', 'd0']);
    const unknown = await s.request('GET', `${hooks}/${id}/deliveries?before=no-such-delivery`);
    expect([unknown.status, unknown.body.error]).toEqual([422, 'services/parley_webhooks/unprocessable_entity/invalid_before']);
  });
});

import { startTestServer, TestServer } from '../support/test-server';
import { rawRequest } from '../support/raw-request';

/** The audit API after real traffic: a room with a send, an edit, a delete, an attachment and a room-scoped role grant. */
describe('audit API (services/parley_audit/v1)', () => {
  let s: TestServer;
  const audit = (path: string, token?: string | null) => s.request('GET', `/services/parley_audit/v1/${s.instanceId}${path}`, { token });
  const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
  let alice: string;
  let messageId: number;
  let attachmentId: string;

  beforeAll(async () => {
    s = await startTestServer();
    alice = s.token({ sub: 'alice' });
    const ok = (res: { status: number; text: string }) => {
      if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
    };
    ok(await s.request('POST', s.chat('/batch_users'), { body: { users: [{ id: 'alice', name: 'Alice' }, { id: 'bob', name: 'Bob' }] } }));
    ok(await s.request('POST', s.chat('/rooms'), { body: { id: 'r1', name: 'r1', user_ids: ['bob'] }, token: alice }));
    const sent = await s.request('POST', s.chat('/rooms/r1/messages'), {
      body: { parts: [{ type: 'text/plain', content: 'first draft' }] },
      token: alice,
      headers: { 'x-request-id': 'audit-send-1' },
    });
    ok(sent);
    messageId = sent.body.message_id;
    ok(await s.request('PUT', s.chat(`/rooms/r1/messages/${messageId}`), { body: { parts: [{ type: 'text/plain', content: 'final' }] }, token: alice }));
    ok(await s.request('DELETE', s.chat(`/rooms/r1/messages/${messageId}`), { token: alice }));
    const bytes = Buffer.from('{"audited":true}');
    const announced = await s.request('POST', s.chat('/rooms/r1/attachments'), {
      body: { content_type: 'application/json', content_length: bytes.length, name: 'a.json' },
      token: alice,
    });
    ok(announced);
    attachmentId = announced.body.attachment_id;
    const put = await rawRequest(s.baseUrl, 'PUT', announced.body.upload_url, bytes, { 'content-type': 'application/json' });
    expect(put.status).toBeLessThan(300);
    ok(await s.request('POST', authz('/roles'), { body: { name: 'mod', scope: 'room', permissions: ['room:update'] } }));
    ok(await s.request('PUT', authz('/users/bob/roles'), { body: { name: 'mod', room_id: 'r1' }, token: s.token({ sub: 'alice', su: true }) }));
    // Outside the room, by alice; in the room, by bob.
    ok(await s.request('PUT', s.chat('/users/alice'), { body: { name: 'Alice B' }, token: alice }));
    ok(await s.request('POST', s.chat('/rooms/r1/messages'), { body: { parts: [{ type: 'text/plain', content: 'hi' }] }, token: s.token({ sub: 'bob' }) }));
  });
  const ROOM_SO_FAR = [
    'RoomCreated',
    'RoomMembersAdded',
    'MessageSent',
    'MessageEdited',
    'MessageDeleted',
    'AttachmentCreated',
    'AttachmentUploaded',
    'UserRoleAssigned',
  ];
  afterAll(() => s.close());

  it("shows a room's whole history: its stream, timeline, the message's edit and delete, its attachment and the role granted in it", async () => {
    const res = await audit('/rooms/r1');
    expect(res.status).toBe(200);
    const { events, next } = res.body;
    expect(next).toBeNull();
    expect(events.map((e: { type: string }) => e.type)).toEqual([...ROOM_SO_FAR, 'MessageSent']);
    expect(events[events.length - 1].actor.user_id).toBe('bob');
    const positions = events.map((e: { position: string }) => e.position);
    expect([...positions].sort()).toEqual(positions);
    const send = events.find((e: { type: string }) => e.type === 'MessageSent');
    expect(send).toEqual({
      stream: `messages-${s.instanceId}.r1`,
      revision: expect.any(Number),
      position: expect.any(String),
      id: expect.any(String),
      type: 'MessageSent',
      recorded_at: expect.any(String),
      actor: { key_id: s.keyId, user_id: 'alice' },
      request_id: 'audit-send-1',
      data: expect.objectContaining({ id: messageId }),
    });
    expect(events.find((e: { type: string }) => e.type === 'MessageDeleted').stream).toBe(`message-${s.instanceId}.${messageId}`);
    expect(events.find((e: { type: string }) => e.type === 'AttachmentCreated').stream).toBe(`attachment-${s.instanceId}.${attachmentId}`);
    expect(events.find((e: { type: string }) => e.type === 'UserRoleAssigned')).toMatchObject({
      stream: `userroles-${s.instanceId}.bob`,
      data: { room_id: 'r1' },
    });
  });

  it('lists everything one user did, in log order, and pages it with from and limit', async () => {
    const all = await audit('/actors/alice');
    expect(all.status).toBe(200);
    const types = all.body.events.map((e: { type: string }) => e.type);
    expect(types).toEqual([...ROOM_SO_FAR, 'UserUpdated']);
    for (const e of all.body.events) expect(e.actor.user_id).toBe('alice');
    expect(all.body.next).toBeNull();
    expect((await audit('/actors/user:alice')).body).toEqual(all.body);

    const seen: string[] = [];
    let from: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const page = await audit(`/actors/alice?limit=2${from ? `&from=${encodeURIComponent(from)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.events.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.events.map((e: { id: string }) => e.id));
      from = page.body.next;
      if (from === null) break;
      expect(from).toBe(page.body.events[page.body.events.length - 1].position);
    }
    expect(seen).toEqual(all.body.events.map((e: { id: string }) => e.id));

    // A key as the actor: the su calls made with the instance key and no user.
    const key = await audit(`/actors/key:${s.keyId}?limit=1000`);
    expect(key.status).toBe(200);
    expect(key.body.events.map((e: { type: string }) => e.type)).toContain('RoleCreated');
  });

  it("pages a user's and a room's history too; past the end is an empty last page", async () => {
    const first = await audit('/rooms/r1?limit=3');
    expect(first.body.events).toHaveLength(3);
    const rest = await audit(`/rooms/r1?from=${encodeURIComponent(first.body.next)}&limit=1000`);
    const whole = await audit('/rooms/r1');
    expect([...first.body.events, ...rest.body.events]).toEqual(whole.body.events);
    const user = await audit('/users/bob');
    expect(user.status).toBe(200);
    expect(user.body.events.map((e: { type: string }) => e.type)).toEqual(['UserCreated', 'UserRoleAssigned']);
    const last = user.body.events[1].position;
    expect((await audit(`/users/bob?from=${encodeURIComponent(last)}`)).body).toEqual({ events: [], next: null });
  });

  it('refuses non-su tokens (403) and missing tokens (401), as JSON', async () => {
    for (const path of ['/users/alice', '/rooms/r1', '/actors/alice']) {
      const user = await audit(path, alice);
      expect(user.status).toBe(403);
      expect(user.body.error).toMatch(/forbidden\/su_required$/);
      const none = await audit(path, null);
      expect(none.status).toBe(401);
      expect(typeof none.body.error).toBe('string');
    }
  });

  it('answers 404 for an entity with no history and 422 for bad paging', async () => {
    for (const path of ['/users/nobody', '/rooms/nowhere', '/actors/nobody', '/actors/key:nokey']) {
      const res = await audit(path);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatch(/not_found\/(user|room|actor)_not_found$/);
    }
    for (const query of ['limit=0', 'limit=1001', 'limit=x', 'from=%22%3B']) {
      const res = await audit(`/actors/alice?${query}`);
      expect(res.status).toBe(422);
      expect(res.body.error).toMatch(/\/invalid_(limit|from)$/);
    }
  });

  it('shows key secrets sealed, never plain', async () => {
    // The instance and its key were created at bootstrap.
    const res = await audit('/actors/key:bootstrap');
    expect(res.status).toBe(200);
    const created = res.body.events.find((e: { type: string }) => e.type === 'KeyCreated');
    expect(created.data.key_id).toBe(s.keyId);
    expect(JSON.stringify(created.data.secret)).toContain('aes-256-gcm');
    expect(res.text).not.toContain(s.secret);
  });
});

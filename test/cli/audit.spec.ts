import { rmSync } from 'node:fs';
import { run } from '../../src/cli/audit';
import { run as admin } from '../../src/cli/admin';
import { captureIo, KEY_ID, KEY_SECRET, newDataDir, Parley, startParley } from './cli-support';

describe('audit CLI', () => {
  let dataDir: string;
  let parley: Parley;
  const audit = async (...argv: string[]) => {
    const io = captureIo();
    const code = await run(argv, { DATA_DIR: dataDir }, io);
    return { code, out: io.text(), err: io.errText(), lines: io.stdout };
  };

  beforeAll(async () => {
    dataDir = newDataDir();
    parley = await startParley(dataDir, 'audited');
    const alice = parley.token({ sub: 'alice' });
    const ok = (res: { status: number }) => expect(res.status).toBeLessThan(300);
    ok(await parley.request('POST', parley.chat('/users'), { body: { id: 'alice', name: 'Alice', custom_data: { team: 'a' } } }));
    ok(await parley.request('PUT', parley.chat('/users/alice'), { body: { name: 'Alice B' }, token: alice }));
    ok(await parley.request('DELETE', parley.chat('/users/alice', 'v2')));
    ok(await parley.request('POST', parley.chat('/users'), { body: { id: 'bob', name: 'Bob' } }));
    ok(await parley.request('POST', parley.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['bob'] } }));
    ok(await parley.request('PUT', parley.chat('/rooms/lobby/users/remove'), { body: { user_ids: ['bob'] } }));
    const authz = (path: string) => `/services/chatkit_authorizer/v2/audited${path}`;
    ok(await parley.request('POST', authz('/roles'), { body: { name: 'moderator', scope: 'global', permissions: ['room:update'] } }));
    ok(await parley.request('PUT', authz('/users/bob/roles'), { body: { name: 'moderator' } }));
    expect((await admin(['key:create', 'audited', 'extra', '--secret', 'extra-secret-value'], { DATA_DIR: dataDir }, captureIo())))
      .toBe(0);
  });
  afterAll(async () => {
    await parley.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("prints a user's history made through the API: revision, type, time, actor and data", async () => {
    const res = await audit('audited', 'user', 'alice');
    expect(res.code).toBe(0);
    expect(res.out).toMatch(/^Streams user-audited\.alice, userroles-audited\.alice, beamsuser-audited\.alice, mutes-audited\.alice, reports-audited\.alice\n/);
    const blocks = res.out.split(/\n(?=#\d+ )/).slice(1);
    expect(blocks).toHaveLength(3);
    const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
    expect(blocks[0]).toMatch(new RegExp(`^#0 UserCreated\n  recorded at: ${time}\n  actor:       key "${KEY_ID}" \\(su\\)\n`));
    // Alice is deleted: her profile, as created and as updated, reads as erased (its key is destroyed).
    expect(blocks[0]).toContain('"name": ""');
    expect(blocks[0]).toContain('"erased": true');
    expect(blocks[0]).not.toContain('Alice');
    expect(blocks[0]).not.toContain('"team"');
    expect(blocks[1]).toMatch(/^#1 UserUpdated\n.*\n  actor:       user "alice" with key "boot-key"\n/);
    expect(blocks[1]).toContain('"erased": true');
    expect(blocks[1]).not.toContain('Alice B');
    expect(blocks[2]).toMatch(/^#2 UserDeleted\n/);
    expect(blocks[2]).toContain('"deleted_at"');
    expect(res.lines[res.lines.length - 1]).toBe('3 events');
  });

  it('shows who granted what, when: the roles of the instance, and the roles a user was given', async () => {
    const roles = await audit('audited', 'roles', '--json');
    expect(roles.code).toBe(0);
    const created = roles.lines.map((l) => JSON.parse(l)).find((e) => e.type === 'RoleCreated');
    expect(created).toMatchObject({ actor: { key_id: KEY_ID, su: true } });
    expect(JSON.stringify(created.data)).toContain('moderator');
    const bob = await audit('audited', 'user', 'bob', '--json');
    const types = bob.lines.map((l) => JSON.parse(l).type);
    expect(types).toEqual(['UserCreated', 'UserRoleAssigned']);
  });

  it('shows a Beams publish: who published what, and never the secret', async () => {
    const published = await fetch(`http://127.0.0.1:${parley.server.httpPort}/publish_api/v1/instances/audited/publishes/interests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ interests: ['news'], web: { notification: { title: 'hello' } } }),
    });
    expect(published.status).toBe(200);
    const { publishId } = await published.json();
    const res = await audit('audited', 'publish', publishId, '--json');
    expect(res.code).toBe(0);
    const [event] = res.lines.map((l) => JSON.parse(l));
    expect(event.type).toBe('BeamsPublishAccepted');
    expect(JSON.stringify(event)).toContain('news');
    expect(JSON.stringify(event)).toContain(KEY_ID);
    expect(res.out).not.toContain(KEY_SECRET);
  });

  it('prints JSON lines with --json', async () => {
    const res = await audit('audited', 'user', 'alice', '--json');
    expect(res.code).toBe(0);
    const events = res.lines.filter(Boolean).map((l) => JSON.parse(l));
    expect(events.map((e) => [e.revision, e.type])).toEqual([
      [0, 'UserCreated'],
      [1, 'UserUpdated'],
      [2, 'UserDeleted'],
    ]);
    expect(events[0]).toMatchObject({
      stream: 'user-audited.alice',
      actor: { key_id: KEY_ID, su: true },
      data: { id: 'alice', name: '', erased: true },
      recorded_at: expect.any(String),
      position: expect.any(String),
    });
    expect(events[0].data).not.toHaveProperty('custom_data');
    expect(events[1].actor).toEqual({ key_id: KEY_ID, user_id: 'alice' });
    // A user not deleted reads whole.
    const bob = (await audit('audited', 'user', 'bob', '--json')).lines.filter(Boolean).map((l) => JSON.parse(l));
    expect(bob[0]).toMatchObject({ type: 'UserCreated', data: { id: 'bob', name: 'Bob' } });
    expect(bob[0].data).not.toHaveProperty('erased');
  });

  it("prints a room's history", async () => {
    const res = await audit('audited', 'room', 'lobby', '--json');
    expect(res.code).toBe(0);
    const types = res.lines.filter(Boolean).map((l) => JSON.parse(l).type);
    expect(types).toEqual(['RoomCreated', 'RoomMembersAdded', 'RoomMembersRemoved']);
  });

  it("prints the instance's own stream with key secrets sealed, never plain", async () => {
    const res = await audit('instance', 'audited');
    expect(res.code).toBe(0);
    expect(res.out).toContain('#0 InstanceCreated');
    expect(res.out).toMatch(/#1 KeyCreated\n.*\n  actor:       key "bootstrap"/);
    expect(res.out).toMatch(/#2 KeyCreated\n.*\n  actor:       key "cli"/);
    expect(res.out).toContain('"alg": "aes-256-gcm"');
    expect(res.out).not.toContain(KEY_SECRET);
    expect(res.out).not.toContain('extra-secret-value');
    const json = await audit('instance', 'audited', '--json');
    expect(json.out).not.toContain(KEY_SECRET);
    expect(json.out).not.toContain('extra-secret-value');
  });

  describe('a room with messages, an attachment and a room-scoped role, and the actor view', () => {
    const http = (path: string) => parley.request('GET', `/services/parley_audit/v1/audited${path}`);
    const authz = (path: string) => `/services/chatkit_authorizer/v2/audited${path}`;
    const jsonLines = (lines: string[]) => lines.filter(Boolean).map((l) => JSON.parse(l));

    beforeAll(async () => {
      const ok = (res: { status: number }) => expect(res.status).toBeLessThan(300);
      const dan = parley.token({ sub: 'dan' });
      ok(await parley.request('POST', parley.chat('/users'), { body: { id: 'dan', name: 'Dan' } }));
      ok(await parley.request('POST', parley.chat('/users'), { body: { id: 'erin', name: 'Erin' } }));
      ok(await parley.request('POST', parley.chat('/rooms'), { body: { id: 'hall', name: 'hall' }, token: dan }));
      const sent = await parley.request('POST', parley.chat('/rooms/hall/messages'), { body: { parts: [{ type: 'text/plain', content: 'one' }] }, token: dan });
      ok(sent);
      const id = sent.body.message_id;
      ok(await parley.request('PUT', parley.chat(`/rooms/hall/messages/${id}`), { body: { parts: [{ type: 'text/plain', content: 'two' }] }, token: dan }));
      ok(await parley.request('DELETE', parley.chat(`/rooms/hall/messages/${id}`), { token: dan }));
      ok(await parley.request('POST', parley.chat('/rooms/hall/attachments'), { body: { content_type: 'text/plain', content_length: 3 }, token: dan }));
      ok(await parley.request('POST', authz('/roles'), { body: { name: 'keeper', scope: 'room', permissions: ['room:update'] } }));
      ok(await parley.request('PUT', authz('/users/erin/roles'), { body: { name: 'keeper', room_id: 'hall' } }));
    });

    it("prints the room's whole history, the same as the audit API", async () => {
      const api = await http('/rooms/hall');
      expect(api.status).toBe(200);
      const res = await audit('audited', 'room', 'hall', '--json');
      expect(res.code).toBe(0);
      const events = jsonLines(res.lines);
      expect(events).toEqual(api.body.events);
      expect(events.map((e) => e.type)).toEqual([
        'RoomCreated',
        'RoomMembersAdded', // the creator joins
        'MessageSent',
        'MessageEdited',
        'MessageDeleted',
        'AttachmentCreated',
        'UserRoleAssigned',
      ]);
      const text = await audit('audited', 'room', 'hall');
      expect(text.out).toMatch(/^Streams room-audited\.hall, messages-audited\.hall, message-audited\.<message id>, attachment-audited\.[^,]+, userroles-audited\.<user id>\n/);
      expect(text.lines[text.lines.length - 1]).toBe('7 events');
    });

    it('lists what one user did, paged with --from and --limit', async () => {
      expect((await http('/actors/dan')).status).toBe(200); // the index has caught up with the log
      const all = await audit('audited', 'actor', 'dan', '--json');
      expect(all.code).toBe(0);
      const types = jsonLines(all.lines).map((e) => e.type);
      expect(types).toEqual(['RoomCreated', 'RoomMembersAdded', 'MessageSent', 'MessageEdited', 'MessageDeleted', 'AttachmentCreated']);
      const first = await audit('audited', 'actor', 'dan', '--limit', '2');
      expect(first.code).toBe(0);
      const more = first.lines.find((l) => l.startsWith('more: --from '));
      expect(more).toBeDefined();
      const rest = await audit('audited', 'actor', 'dan', '--json', '--from', more!.slice('more: --from '.length));
      expect(jsonLines(rest.lines).map((e) => e.type)).toEqual(types.slice(2));
      const byKey = await audit('audited', 'actor', `key:${KEY_ID}`, '--json', '--limit', '1000');
      expect(jsonLines(byKey.lines).map((e) => e.type)).toContain('UserRoleAssigned');
      expect((await audit('audited', 'actor', 'nobody')).code).toBe(1);
      expect((await audit('audited', 'room', 'hall', '--limit', '2')).code).toBe(2);
      // Checked as the audit API checks them: a mistyped position is refused, not read as "nothing after it".
      const badFrom = await audit('audited', 'actor', 'dan', '--from', 'zz');
      expect([badFrom.code, badFrom.err]).toEqual([2, expect.stringContaining('--from must be a log position')]);
      expect((await audit('audited', 'actor', 'dan', '--limit', '0')).err).toContain('--limit must be a whole number from 1 to 1000');
    });
  });

  it('answers "no events" with exit 1 for an entity that never existed', async () => {
    const res = await audit('audited', 'user', 'nobody');
    expect(res.code).toBe(1);
    expect(res.out).toBe('');
    expect(res.err).toContain('no events');
    expect((await audit('instance', 'nowhere')).code).toBe(1);
    expect((await audit('elsewhere', 'room', 'lobby')).code).toBe(1);
  });

  it('answers a wrong command line with the usage and exit 2', async () => {
    for (const argv of [[], ['audited', 'message', 'x'], ['audited', 'user'], ['a', 'b', 'c', 'd']]) {
      const res = await audit(...argv);
      expect(res.code).toBe(2);
      expect(res.err).toContain('Usage: npm run audit');
    }
    expect((await audit('--help')).code).toBe(0);
  });
});

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
    expect(res.out).toMatch(/^Streams user-audited\.alice, userroles-audited\.alice, beamsuser-audited\.alice\n/);
    const blocks = res.out.split(/\n(?=#\d+ )/).slice(1);
    expect(blocks).toHaveLength(3);
    const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';
    expect(blocks[0]).toMatch(new RegExp(`^#0 UserCreated\n  recorded at: ${time}\n  actor:       key "${KEY_ID}" \\(su\\)\n`));
    expect(blocks[0]).toContain('"name": "Alice"');
    expect(blocks[0]).toContain('"team": "a"');
    expect(blocks[1]).toMatch(/^#1 UserUpdated\n.*\n  actor:       user "alice" with key "boot-key"\n/);
    expect(blocks[1]).toContain('"name": "Alice B"');
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
      data: { id: 'alice', name: 'Alice', custom_data: { team: 'a' } },
      recorded_at: expect.any(String),
      position: expect.any(String),
    });
    expect(events[1].actor).toEqual({ key_id: KEY_ID, user_id: 'alice' });
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

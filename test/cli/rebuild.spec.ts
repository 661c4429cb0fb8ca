import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { foldsOf, rebuildLabel, run as rebuild } from '../../src/cli/rebuild';
import { run as admin } from '../../src/cli/admin';
import { SqliteReadModelStore } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';
import { USERS, usersProjection } from '../../projections/users/users.projection';
import { physicalCollection } from '../../projections/projection';
import { ALL_PROJECTIONS } from '../../projections';
import { captureIo, KEY_SECRET, newDataDir, Parley, startParley } from './cli-support';

const INSTANCE = 'rebuilt';
const USER_IDS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina', 'nobody'];
const ROOM_IDS = ['general', 'secret', 'random', 'ops', 'doomed', 'nope'];
const ADMIN_SECRET = 'admin-made-secret-0c9d';
const NAMES = [...new Set(ALL_PROJECTIONS.map((p) => p.name))];
/** As the rebuild reports them: a projection listed in two versions (an upgrade) by its versioned name. */
const LABELS = ALL_PROJECTIONS.map(rebuildLabel);
const count = '\\d+ events?, \\d+ documents? written';

/** Writes users and rooms through the HTTP API: updates, deletes, members added and removed. */
async function writeHistory(p: Parley): Promise<void> {
  const ok = async (res: Promise<{ status: number; body: unknown }>) => {
    const { status, body } = await res;
    if (status >= 300) throw new Error(`unexpected ${status}: ${JSON.stringify(body)}`);
  };
  const as = (sub: string) => p.token({ sub });
  await ok(p.request('POST', p.chat('/users'), { body: { id: 'alice', name: 'Alice', avatar_url: 'https://x/a.png', custom_data: { n: 1 } } }));
  await ok(p.request('POST', p.chat('/users', 'v2'), { body: { id: 'bob', name: 'Bob' } }));
  await ok(p.request('POST', p.chat('/batch_users'), {
    body: { users: ['carol', 'dave', 'erin', 'frank'].map((id) => ({ id, name: id.toUpperCase() })) },
  }));
  await ok(p.request('PUT', p.chat('/users/alice'), { body: { name: 'Alice A' }, token: as('alice') }));
  await ok(p.request('PUT', p.chat('/users/bob', 'v2'), { body: { custom_data: { likes: ['x'] }, avatar_url: 'https://x/b.png' } }));
  await ok(p.request('PUT', p.chat('/users/alice'), { body: { custom_data: { n: 2 } } }));
  await ok(p.request('POST', p.chat('/users'), { body: { id: 'gina', name: 'Gina' } }));

  await ok(p.request('POST', p.chat('/rooms'), { body: { id: 'general', name: 'general', user_ids: ['alice', 'bob', 'carol'] } }));
  await ok(p.request('POST', p.chat('/rooms'), {
    body: { id: 'secret', name: 'secret', private: true, user_ids: ['alice', 'dave'], custom_data: { k: 'v' } },
  }));
  await ok(p.request('POST', p.chat('/rooms'), { body: { id: 'random', name: 'random', created_by_id: 'erin' }, token: as('erin') }));
  await ok(p.request('POST', p.chat('/rooms'), { body: { id: 'ops', name: 'ops', push_notification_title_override: 'OPS' } }));
  await ok(p.request('POST', p.chat('/rooms'), { body: { id: 'doomed', name: 'doomed', user_ids: ['bob', 'frank'] } }));
  await ok(p.request('PUT', p.chat('/rooms/general/users/add'), { body: { user_ids: ['dave', 'erin', 'frank'] } }));
  await ok(p.request('PUT', p.chat('/rooms/general/users/remove'), { body: { user_ids: ['bob'] } }));
  await ok(p.request('POST', p.chat('/users/gina/rooms/random/join'), { token: as('gina') }));
  await ok(p.request('POST', p.chat('/users/frank/rooms/random/join'), { token: as('frank') }));
  await ok(p.request('POST', p.chat('/users/frank/rooms/random/leave'), { token: as('frank') }));
  await ok(p.request('PUT', p.chat('/rooms/ops'), { body: { name: 'ops-room', private: true, push_notification_title_override: null } }));
  await ok(p.request('PUT', p.chat('/rooms/ops/users/add'), { body: { user_ids: ['carol'] } }));
  await ok(p.request('PUT', p.chat('/rooms/secret'), { body: { custom_data: { k: 'w' } } }));
  await ok(p.request('DELETE', p.chat('/rooms/doomed')));
  // A deleted member takes their memberships along; a deleted user with no rooms too.
  await ok(p.request('DELETE', p.chat('/users/dave')));
  await ok(p.request('DELETE', p.chat('/users/carol', 'v2')));
}

/** Every users and rooms read the API offers, in both versions, with the status and the body. */
async function captureAnswers(p: Parley): Promise<Record<string, { status: number; body: unknown }>> {
  const paths: string[] = ['/users', '/users?limit=3', `/users_by_ids?${USER_IDS.map((id) => `id=${id}`).join('&')}`, '/rooms', '/rooms?include_private=true'];
  for (const id of USER_IDS) paths.push(`/users/${id}`, `/users/${id}/rooms`, `/users/${id}/rooms?joinable=true`);
  for (const id of ROOM_IDS) paths.push(`/rooms/${id}`);
  const answers: Record<string, { status: number; body: unknown }> = {};
  for (const version of ['v2', 'v6'] as const) {
    for (const path of paths) {
      const { status, body } = await p.request('GET', p.chat(path, version));
      answers[`${version} ${path}`] = { status, body };
    }
  }
  return answers;
}

const rebuildCli = async (dataDir: string, ...argv: string[]) => {
  const io = captureIo();
  const code = await rebuild(argv, { DATA_DIR: dataDir }, io);
  return { code, out: io.text(), err: io.errText(), lines: io.stdout };
};

describe('rebuild CLI', () => {
  let dataDir: string;
  let parley: Parley | undefined;
  beforeAll(() => {
    dataDir = newDataDir();
  });
  afterEach(async () => {
    await parley?.close();
    parley = undefined;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('replays the log into fresh read models that answer every users and rooms read exactly as before', async () => {
    parley = await startParley(dataDir, INSTANCE);
    await writeHistory(parley);
    expect((await admin(['key:create', INSTANCE, 'second', '--secret', ADMIN_SECRET], { DATA_DIR: dataDir }, captureIo()))).toBe(0);
    const before = await captureAnswers(parley);
    // The fixture covers what it should: members added and removed, deletions, private rooms.
    expect(before['v6 /rooms/general']).toMatchObject({ status: 200, body: { member_user_ids: ['alice', 'erin', 'frank'] } });
    expect(before['v6 /rooms/doomed'].status).toBe(404);
    expect(before['v6 /users/dave'].status).toBe(404);
    expect(before['v6 /users/frank/rooms']).toMatchObject({ status: 200 });
    expect((before['v6 /rooms?include_private=true'].body as unknown[]).length).toBe(4);
    expect((before['v6 /rooms'].body as unknown[]).length).toBe(2);
    await parley.close();
    parley = undefined;

    // Make the read models wrong on purpose: the rebuild must not depend on them.
    const models = new SqliteReadModelStore(join(dataDir, 'read-models.sqlite'));
    await models.reset([physicalCollection(USERS, usersProjection.version)], []);
    await models.close();

    const res = await rebuildCli(dataDir);
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    expect(res.lines[0]).toMatch(new RegExp(`^Rebuilding ${LABELS.join(', ')} from the log`));
    expect(res.out).not.toContain('on a thread of its own');
    expect(res.out).toMatch(/^rebuild: log position (\d+)\/\1 \(100%\)$/m);
    const summary = res.lines[res.lines.length - 1];
    expect(summary).toMatch(new RegExp(`^Replayed \\d+ events in [\\d.]+ s \\(${LABELS.map((n) => `${n}: ${count}`).join('; ')}\\)$`));
    expect(summary).toMatch(/\(instances: 3 events, \d+ documents? written; users: 12 events, /);

    parley = await startParley(dataDir, INSTANCE);
    const after = await captureAnswers(parley);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    for (const key of Object.keys(before)) expect({ key, ...after[key] }).toEqual({ key, ...before[key] });
    // The instance read model came back too: the admin-made key signs tokens again.
    const token = parley.token({ su: true }, { keyId: 'second', secret: ADMIN_SECRET });
    expect((await parley.request('GET', parley.chat('/users'), { token })).status).toBe(200);
  });

  it('with --parallel, folds message search on a thread of its own beside the others, and search answers as before', async () => {
    parley = await startParley(dataDir, INSTANCE);
    const sent: number[] = [];
    for (const content of ['the quick brown fox', 'a lazy dog', 'quick thinking', 'nothing here']) {
      const { status, body } = await parley.request('POST', parley.chat('/rooms/general/messages'), {
        body: { parts: [{ type: 'text/plain', content }] },
        token: parley.token({ sub: 'alice' }),
      });
      expect(status).toBe(201);
      sent.push(body.message_id);
    }
    const search = async (q: string) => (await parley!.request('GET', parley!.chat(`/search/messages?q=${q}`), { token: parley!.token({ sub: 'alice' }) })).body;
    const before = { quick: await search('quick'), dog: await search('dog') };
    expect(before.quick.results.map((r: { message: { id: number } }) => r.message.id)).toEqual([sent[2], sent[0]]);
    await parley.close();
    parley = undefined;

    const res = await rebuildCli(dataDir, '--parallel');
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    expect(res.lines[1]).toBe('message_search folds on a thread of its own (search.sqlite)');
    expect(res.lines[res.lines.length - 1]).toMatch(/; message_search: \d+ events, 4 documents written;/);

    parley = await startParley(dataDir, INSTANCE);
    expect({ quick: await search('quick'), dog: await search('dog') }).toEqual(before);
  });

  it('folds on one thread with EventStoreDB or MongoDB, or when only the projections kept apart are chosen', () => {
    const search = ALL_PROJECTIONS.filter((p) => p.background?.sqliteFile);
    const others = ALL_PROJECTIONS.filter((p) => !p.background?.sqliteFile);
    expect(search.map((p) => p.name)).toEqual(['message_search']);
    expect(foldsOf(ALL_PROJECTIONS, {})).toEqual({ here: others, apart: [search] });
    expect(foldsOf(ALL_PROJECTIONS, { eventStoreConnectionString: 'esdb://x' })).toEqual({ here: ALL_PROJECTIONS, apart: [] });
    expect(foldsOf(ALL_PROJECTIONS, { mongodbUri: 'mongodb://x' })).toEqual({ here: ALL_PROJECTIONS, apart: [] });
    expect(foldsOf(search, {})).toEqual({ here: search, apart: [] });
  });

  it('leaves no key secret in plain text anywhere in the stores', async () => {
    const files = readdirSync(dataDir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name !== 'master.key')
      .map((e) => e.name);
    expect(files).toEqual(expect.arrayContaining(['events.sqlite', 'read-models.sqlite']));
    const log = readFileSync(join(dataDir, 'events.sqlite')).toString('latin1');
    expect(log).toContain('user-rebuilt.alice'); // the log's bytes are readable (stream names are never sealed): the check below means something
    for (const file of files) {
      const bytes = readFileSync(join(dataDir, file));
      for (const secret of [KEY_SECRET, ADMIN_SECRET]) {
        expect({ file, found: bytes.includes(Buffer.from(secret)) }).toEqual({ file, found: false });
      }
    }
  });

  it('refuses while a server holds the leases, and leaves its read models alone', async () => {
    parley = await startParley(dataDir, INSTANCE);
    const res = await rebuildCli(dataDir, 'users');
    expect(res.code).toBe(1);
    expect(res.err).toContain('another Parley process is running the projection users_v1');
    expect(res.err).toContain('Stop the server');
    expect((await parley.request('GET', parley.chat('/users/alice'))).status).toBe(200);
  });

  it('rebuilds only the projections named', async () => {
    const res = await rebuildCli(dataDir, 'users', 'room_memberships');
    expect(res.code).toBe(0);
    expect(res.lines[0]).toMatch(/^Rebuilding users, room_memberships from/);
    expect(res.lines[res.lines.length - 1]).toMatch(new RegExp(`\\(users: ${count}; room_memberships: ${count}\\)$`));
    parley = await startParley(dataDir, INSTANCE);
    expect((await parley.request('GET', parley.chat('/rooms/general'))).body.member_user_ids).toEqual(['alice', 'erin', 'frank']);
  });

  it('answers an unknown projection with the usage and exit 2', async () => {
    const res = await rebuildCli(dataDir, 'users', 'no_such_thing');
    expect(res.code).toBe(2);
    expect(res.err).toContain('unknown projection "no_such_thing"');
    expect(res.err).toContain(`Projections: ${NAMES.join(', ')}`);
  });

  it('rebuilds an empty log into empty read models', async () => {
    const empty = newDataDir();
    try {
      const res = await rebuildCli(empty);
      expect(res.code).toBe(0);
      expect(res.lines[res.lines.length - 1]).toMatch(/^Replayed 0 events/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

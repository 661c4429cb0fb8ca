import Database from 'better-sqlite3';
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { FsBlobStore } from '../../src/adapters/blobs/fs/fs-blob-store';
import { checkExport, importInstance } from '../../src/shared/application/operations/instance-transfer/import-instance';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { rawRequest } from '../support/raw-request';
import { eventually, newDataDir, Parley, startParley } from './cli-support';

/**
 * Export → import → identical API answers, with the built CLIs as real child processes
 * (run `npm run build` first): SQLite → SQLite, the path documented for EventStoreDB + MongoDB.
 */
const ROOT = join(__dirname, '..', '..');
const INSTANCE = 'moving';
const ATTACHMENT_BYTES = Buffer.from(JSON.stringify({ moved: true, n: [1, 2, 3], text: 'héllo ✓' }));

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment of a CLI on `dataDir`: nothing inherited that would choose other stores or keys. */
function cliEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra };
  for (const name of ['MASTER_KEY', 'EVENTSTORE_CONNECTION_STRING', 'MONGODB_URI', 'INSTANCE_LOCATOR', 'INSTANCE_KEY']) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

function start(script: 'export' | 'import', args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<Finished>; stdout(): string } {
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/cli', `${script}.js`), ...args], { env, cwd: ROOT });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const done = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, stdout: () => stdout };
}

const cli = (script: 'export' | 'import', args: string[], env: NodeJS.ProcessEnv) => start(script, args, env).done;

const eventLines = (dir: string) => readFileSync(join(dir, 'events.ndjson'), 'utf8').split('\n').filter(Boolean);

function logCount(dataDir: string): number {
  const file = join(dataDir, 'events.sqlite');
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Links carry the server's address and an expiry: kept aside, the rest must be identical. */
function withoutLinks(value: unknown, links: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutLinks(v, links));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (/url|link/.test(k) && typeof v === 'string') {
        links.push(v);
        return [k, '<link>'];
      }
      return [k, k === 'expiration' ? '<expiry>' : withoutLinks(v, links)];
    }),
  );
}

const authz = (path: string) => `/services/chatkit_authorizer/v2/${INSTANCE}${path}`;
const cursors = (path: string) => `/services/chatkit_cursors/v2/${INSTANCE}/cursors/0${path}`;

async function ok(res: Promise<{ status: number; body: any }>): Promise<any> {
  const { status, body } = await res;
  if (status >= 300) throw new Error(`unexpected ${status}: ${JSON.stringify(body)}`);
  return body;
}

/** Users, rooms, messages (v2 and v6, an edit, a deletion, an attachment, reactions, a pin, thread replies), reports, a mute, cursors (a thread's too), a role. */
/** Users, rooms, messages (v2 and v6, an edit, a deletion, an attachment, reactions, a pin), a cursor, a role, a ban, a frozen room. */
async function fill(p: Parley): Promise<void> {
  const as = (sub: string) => p.token({ sub });
  await ok(p.request('POST', p.chat('/batch_users'), { body: { users: ['alice', 'bob', 'carol'].map((id) => ({ id, name: id.toUpperCase() })) } }));
  await ok(p.request('PUT', p.chat('/users/alice'), { body: { name: 'Alice A', custom_data: { n: 1 } } }));
  await ok(p.request('POST', p.chat('/rooms'), { body: { id: 'general', name: 'general', user_ids: ['bob', 'carol'] }, token: as('alice') }));
  await ok(p.request('POST', p.chat('/rooms'), { body: { id: 'secret', name: 'secret', private: true, user_ids: ['bob'] }, token: as('alice') }));

  const created = await ok(
    p.request('POST', p.chat('/rooms/general/attachments'), {
      body: { content_type: 'application/json', content_length: ATTACHMENT_BYTES.length, name: 'data.json' },
      token: as('alice'),
    }),
  );
  const put = await rawRequest('', 'PUT', created.upload_url, ATTACHMENT_BYTES, { 'content-type': 'application/json' });
  expect(put.status).toBeLessThan(300);
  const first = await ok(
    p.request('POST', p.chat('/rooms/general/messages'), {
      body: { parts: [{ type: 'text/plain', content: 'see attached' }, { type: 'application/json', attachment: { id: created.attachment_id } }] },
      token: as('alice'),
    }),
  );
  const second = await ok(p.request('POST', p.chat('/rooms/general/messages', 'v2'), { body: { text: 'hello from v2' }, token: as('bob') }));
  await ok(p.request('POST', p.chat('/rooms/secret/messages', 'v2'), { body: { text: 'psst' }, token: as('bob') }));
  const doomed = await ok(p.request('POST', p.chat('/rooms/general/messages', 'v2'), { body: { text: 'oops' }, token: as('carol') }));
  await ok(p.request('PUT', p.chat(`/rooms/general/messages/${second.message_id}`), { body: { parts: [{ type: 'text/plain', content: 'edited' }] }, token: as('bob') }));
  await ok(p.request('PUT', p.chat(`/rooms/general/messages/${first.message_id}/reactions/${encodeURIComponent('👍')}`), { token: as('bob') }));
  await ok(p.request('PUT', p.chat(`/rooms/general/messages/${first.message_id}/reactions/:tada:`), { token: as('carol') }));
  await ok(p.request('PUT', p.chat(`/rooms/general/messages/${first.message_id}/pin`), { token: as('bob') }));
  await ok(p.request('POST', p.chat(`/rooms/general/messages/${first.message_id}/reports`), { body: { category: 'spam', reason: 'an advert' }, token: as('bob') }));
  const reported = await ok(p.request('POST', p.chat('/users/carol/reports'), { body: { category: 'harassment' }, token: as('alice') }));
  await ok(p.request('POST', `/services/parley_admin/v1/${INSTANCE}/reports/${reported.id}/resolve`, { body: { action: 'dismiss', note: 'talked to carol' } }));
  await ok(p.request('PUT', p.chat('/users/alice/mutes/carol'), { token: as('alice') }));
  await ok(p.request('DELETE', p.chat(`/rooms/general/messages/${doomed.message_id}`), { token: as('carol') }));
  const threadReply = await ok(
    p.request('POST', p.chat(`/rooms/general/messages/${first.message_id}/replies`), { body: { parts: [{ type: 'text/plain', content: 'a thread reply' }] }, token: as('carol') }),
  );
  await ok(
    p.request('POST', p.chat(`/rooms/general/messages/${first.message_id}/replies`), { body: { parts: [{ type: 'text/plain', content: 'a reply in both' }], also_in_room: true }, token: as('bob') }),
  );
  await ok(p.request('PUT', p.chat(`/rooms/general/messages/${first.message_id}/replies/read_cursors/bob`), { body: { position: threadReply.message_id }, token: as('bob') }));
  await ok(p.request('PUT', cursors('/rooms/general/users/bob'), { body: { position: first.message_id }, token: as('bob') }));
  await ok(p.request('POST', authz('/roles'), { body: { name: 'mod', scope: 'room', permissions: ['room:update', 'message:create'] } }));
  await ok(p.request('PUT', authz('/users/bob/roles'), { body: { name: 'mod', room_id: 'general' } }));
  await ok(p.request('PUT', p.chat('/rooms/secret/bans/carol'), { body: { reason: 'trolling', until: '2099-01-01T00:00:00.000Z' } }));
  await ok(p.request('PUT', p.chat('/rooms/secret/freeze')));
}

/** Every read the test compares, with links set aside; the attachment's bytes downloaded through them. */
async function answers(p: Parley): Promise<{ answers: Record<string, unknown>; downloads: string[] }> {
  const reads: [string, string, string | undefined][] = [
    ['users', p.chat('/users'), undefined],
    ['alice', p.chat('/users/alice'), undefined],
    ['rooms', p.chat('/rooms?include_private=true'), undefined],
    ['general', p.chat('/rooms/general'), undefined],
    ['alice rooms', p.chat('/users/alice/rooms'), undefined],
    ['general v6', p.chat('/rooms/general/messages?limit=50'), 'alice'],
    ['general v2', p.chat('/rooms/general/messages?limit=50', 'v2'), 'bob'],
    ['general pins', p.chat('/rooms/general/pins'), 'bob'],
    ['reports', `/services/parley_admin/v1/${INSTANCE}/reports?status=all`, undefined],
    ['alice mutes', p.chat('/users/alice/mutes'), 'alice'],
    ['bob threads', p.chat('/users/bob/threads'), 'bob'],
    ['secret bans', p.chat('/rooms/secret/bans'), undefined],
    ['secret frozen', p.chat('/rooms/secret/freeze'), undefined],
    ['secret v2', p.chat('/rooms/secret/messages', 'v2'), 'bob'],
    ['bob cursors', cursors('/users/bob'), undefined],
    ['general cursors', cursors('/rooms/general'), undefined],
    ['roles', authz('/roles'), undefined],
    ['bob roles', authz('/users/bob/roles'), undefined],
  ];
  const out: Record<string, unknown> = {};
  const links: string[] = [];
  for (const [name, path, sub] of reads) {
    const res = await p.request('GET', path, sub ? { token: p.token({ sub }) } : {});
    out[name] = { status: res.status, body: withoutLinks(res.body, links) };
  }
  const downloads: string[] = [];
  for (const link of links.filter((l) => l.includes('/download') || l.includes('sig='))) {
    const got = await rawRequest('', 'GET', link);
    downloads.push(`${got.status} ${got.bytes.toString('base64')}`);
  }
  return { answers: out, downloads };
}

describe('export and import of an instance (built CLIs as processes, SQLite → SQLite)', () => {
  const source = newDataDir();
  const target = newDataDir();
  const exportDir = join(newDataDir(), 'export');
  const followDir = join(newDataDir(), 'followed');
  let src: Parley;
  let dst: Parley | undefined;

  beforeAll(async () => {
    src = await startParley(source, INSTANCE);
    await fill(src);
  }, 30_000);
  afterAll(async () => {
    await dst?.close();
    await src.close();
  });

  it('--follow copies the log, then writes live events as they arrive until SIGINT', async () => {
    const following = start('export', [INSTANCE, '--out', followDir, '--follow'], cliEnv(source));
    await eventually(async () => following.stdout().includes('following the live log'), 15_000);
    const before = eventLines(followDir).length;
    await ok(src.request('POST', src.chat('/rooms/general/messages', 'v2'), { body: { text: 'sent while following' }, token: src.token({ sub: 'carol' }) }));
    await eventually(async () => eventLines(followDir).some((l) => l.includes('sent while following')), 10_000);
    following.child.kill('SIGINT');
    const { code, stdout, stderr } = await following.done;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/Stopped following: exported \d+ events and 1 blob/);
    const lines = eventLines(followDir);
    expect(lines.length).toBeGreaterThan(before);
    const manifest = JSON.parse(readFileSync(join(followDir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'parley-instance-export', instance_id: INSTANCE, complete: true, events: lines.length, blobs: 1 });
  }, 30_000);

  it('exports the instance while its server runs: the same lines as the followed export', async () => {
    const { code, stdout, stderr } = await cli('export', [INSTANCE, '--out', exportDir], cliEnv(source));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Exported \d+ events and 1 blob of instance "moving"/);
    const lines = eventLines(exportDir);
    expect(lines).toEqual(eventLines(followDir));
    const events = lines.map((l) => JSON.parse(l));
    expect(events.every((e) => /^[a-z]+-moving(\.|$)/.test(e.stream))).toBe(true);
    expect(Object.keys(events[0]).sort()).toEqual(['data', 'id', 'metadata', 'position', 'recorded_at', 'revision', 'stream', 'type']);
    // Key secrets travel sealed, never plain.
    expect(readFileSync(join(exportDir, 'events.ndjson'), 'utf8')).not.toContain('boot-secret');
    const [blob] = readFileSync(join(exportDir, 'blobs.ndjson'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(readFileSync(join(exportDir, 'blobs', ...blob.key.split('/')))).toEqual(ATTACHMENT_BYTES);
    // A second export into the same directory is refused, and the first one is left as it was.
    const manifest = readFileSync(join(exportDir, 'manifest.json'), 'utf8');
    expect(JSON.parse(manifest)).toMatchObject({ complete: true, events: lines.length, blobs: 1 });
    const again = await cli('export', [INSTANCE, '--out', exportDir], cliEnv(source));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds an export/);
    expect(eventLines(exportDir)).toEqual(lines);
    expect(readFileSync(join(exportDir, 'manifest.json'), 'utf8')).toBe(manifest);
  }, 30_000);

  it('refuses a target without the source master key, or with another one, writing nothing', async () => {
    const none = await cli('import', [exportDir], cliEnv(target));
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/sealed with the source's master key.*MASTER_KEY.*master\.key.*Nothing was written/s);
    const other = await cli('import', [exportDir], cliEnv(target, { MASTER_KEY: randomBytes(32).toString('base64') }));
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/not the one the export's key secrets were sealed with.*Nothing was written/s);
    const wrongInstance = await cli('import', [exportDir, '--instance', 'elsewhere'], cliEnv(target));
    expect(wrongInstance.code).toBe(1);
    expect(wrongInstance.stderr).toMatch(/export of instance "moving", not "elsewhere"/);
    expect(logCount(target)).toBe(0);
  }, 30_000);

  it('refuses a target where the instance was created apart from the export (a bootstrap), writing nothing', async () => {
    const bootstrapped = newDataDir();
    copyFileSync(join(source, 'master.key'), join(bootstrapped, 'master.key'));
    await (await startParley(bootstrapped, INSTANCE)).close();
    const before = logCount(bootstrapped);
    expect(before).toBeGreaterThan(0);
    const refused = await cli('import', [exportDir], cliEnv(bootstrapped));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/stream instance-moving holds another event at revision 0.*bootstrap.*\nNothing was written\./s);
    expect(logCount(bootstrapped)).toBe(before);
  }, 30_000);

  it('imports into a fresh data directory with the same master key; a second import changes nothing', async () => {
    copyFileSync(join(source, 'master.key'), join(target, 'master.key'));
    const exported = eventLines(exportDir).map((l) => JSON.parse(l));
    const first = await cli('import', [exportDir, '--instance', INSTANCE], cliEnv(target));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`${exported.length} events appended (0 already there), 1 blob copied (0 already there)`);
    expect(logCount(target)).toBe(exported.length);

    const second = await cli('import', [exportDir], cliEnv(target));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`0 events appended (${exported.length} already there), 0 blobs copied (1 already there)`);
    expect(logCount(target)).toBe(exported.length);

    // Ids, order (positions increase in the export's order) and recorded times are kept.
    const db = new Database(join(target, 'events.sqlite'), { readonly: true });
    const rows = db.prepare('SELECT stream, revision, event_id, type, recorded_at FROM events ORDER BY position').all() as any[];
    db.close();
    expect(rows.map((r) => [r.stream, r.revision, r.event_id, r.type, r.recorded_at])).toEqual(
      exported.map((e) => [e.stream, e.revision, e.id, e.type, e.recorded_at]),
    );
  }, 30_000);

  it('an interrupted import resumes: the next run appends only what the first did not, mid-stream included', async () => {
    const lines = eventLines(exportDir);
    const streams = lines.map((l) => JSON.parse(l).stream);
    // Cut inside a run of one stream's events when there is one, so one append batch is half there.
    const inRun = streams.findIndex((s, i) => i > 0 && s === streams[i - 1]);
    const cut = inRun > 0 ? inRun : Math.floor(lines.length / 2);
    const partialDir = join(newDataDir(), 'partial');
    mkdirSync(partialDir);
    copyFileSync(join(exportDir, 'manifest.json'), join(partialDir, 'manifest.json'));
    writeFileSync(join(partialDir, 'events.ndjson'), lines.slice(0, cut).join('\n') + '\n');

    const dir = newDataDir();
    const log = new SqliteEventStore(join(dir, 'events.sqlite'));
    const blobs = await FsBlobStore.open(join(dir, 'blobs'));
    try {
      const partial = await importInstance(partialDir, await checkExport(partialDir), log, blobs);
      expect(partial).toEqual({ eventsAppended: cut, eventsPresent: 0, blobsCopied: 0, blobsPresent: 0 });
      const rest = await importInstance(exportDir, await checkExport(exportDir), log, blobs);
      expect(rest).toEqual({ eventsAppended: lines.length - cut, eventsPresent: cut, blobsCopied: 1, blobsPresent: 0 });
      expect((await log.readAll({ maxCount: 1000 })).map((e) => e.id)).toEqual(lines.map((l) => JSON.parse(l).id));
    } finally {
      await log.close();
      await blobs.close();
    }
  });

  it('a server on the imported data answers every read as the source does, attachment bytes included', async () => {
    dst = await startParley(target, INSTANCE);
    // Its bootstrap of the same instance and key finds them imported: nothing new in the log.
    expect(logCount(target)).toBe(eventLines(exportDir).length);
    const before = await answers(src);
    const after = await answers(dst);
    const statuses = Object.values(before.answers).map((a) => (a as { status: number }).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(after.answers).toEqual(before.answers);
    expect(before.downloads.length).toBeGreaterThan(0);
    expect(after.downloads).toEqual(before.downloads);
    expect(after.downloads[0]).toBe(`200 ${ATTACHMENT_BYTES.toString('base64')}`);
    // The general room's v6 page shows the edited, the deleted and the followed messages as the source does.
    const general = JSON.stringify(after.answers['general v6']);
    for (const text of ['see attached', 'edited', 'sent while following']) expect(general).toContain(text);
    expect(general).not.toContain('hello from v2');
    expect(JSON.stringify(after.answers['bob roles'])).toContain('mod');
    // Reactions and pins too: counts per type on the message, the pin with its message.
    expect(general).toContain('"counts":{"👍":1,":tada:":1}');
    expect((after.answers['general pins'] as { body: { pins: unknown[] } }).body.pins).toHaveLength(1);
    // The review queue (a report open, one resolved with its note) and the mute.
    const reports = JSON.stringify(after.answers['reports']);
    for (const text of ['an advert', 'talked to carol', '"status":"open"', '"status":"resolved"']) expect(reports).toContain(text);
    expect(JSON.stringify(after.answers['alice mutes'])).toContain('carol');
    // Bans (with their sealed reasons) and frozen rooms too.
    expect((after.answers['secret bans'] as { body: unknown }).body).toEqual({ bans: [expect.objectContaining({ user_id: 'carol', reason: 'trolling', until: '2099-01-01T00:00:00.000Z' })] });
    expect((after.answers['secret frozen'] as { body: unknown }).body).toEqual({ frozen: true });
    expect(JSON.stringify(after.answers['bob cursors'])).toContain('general');
    // Threads: the parent's summary, the reply also in the room, bob's thread with its unread count from his thread cursor.
    expect(general).toContain('"thread":{"reply_count":2');
    expect(general).toContain('a reply in both');
    expect(general).not.toContain('a thread reply');
    expect((after.answers['bob threads'] as { body: { threads: { unread_count: number }[] } }).body.threads.map((t) => t.unread_count)).toEqual([1]);
  }, 30_000);
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { ChatServerOnDataDir } from '../support/chat-server-on-data-dir';
import { eventually } from '../support/waiting';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';

/**
 * Deleting a user means their profile is gone: a real server from dist/ on the embedded default,
 * users whose name, avatar URL and custom data (at creation and in an update) carry markers,
 * then their deletes (v6, v2, the scheduler's asynchronous one); a byte scan of every file under
 * DATA_DIR (WAL included, while running and after a stop), a fresh export, every API answer (the
 * audit API too) and the server's output finds none of the deleted profiles' markers, and every
 * profile not deleted is still read whole.
 */
const INSTANCE = 'shred-users';
const KEY = 'shred-users-key:shred-users-secret-7c1d';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
const v6 = (path: string) => `/services/chatkit/v6/${INSTANCE}${path}`;
const v2 = (path: string) => `/services/chatkit/v2/${INSTANCE}${path}`;
const audit = (path: string) => `/services/parley_audit/v1/${INSTANCE}${path}`;
const scheduler = (path: string) => `/services/chatkit_scheduler/v1/${INSTANCE}${path}`;

/** A profile whose every personal field carries a marker of its own. */
const profile = (id: string) => {
  const [name, avatar, custom] = ['name', 'avatar', 'custom'].map((what) => marker(`${id}-${what}`));
  return { markers: [name, avatar, custom], body: { id, name, avatar_url: `https://example.com/${avatar}.png`, custom_data: { note: custom } } };
};

let server: ChatServerOnDataDir;
let dataDir: string;

/** Every answer a client or an operator can read users through: the users API (v2 and v6) and the audit API. */
async function answers(ids: readonly string[]): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  const paths = [v6('/users?limit=100'), v2('/users'), v6(`/users_by_ids?${ids.map((id) => `id=${id}`).join('&')}`)];
  for (const id of ids) paths.push(v6(`/users/${id}`), v2(`/users/${id}`), audit(`/users/${id}?limit=1000`), audit(`/actors/${id}?limit=1000`));
  // A deleted user answers 404: its answer is scanned all the same.
  for (const path of paths) texts[path] = (await server.call('GET', path, { anyStatus: true })).text;
  return texts;
}

type AuditEvent = { type: string; data: { erased?: boolean; name?: string } };
const auditOf = async (id: string) => (await server.call('GET', audit(`/users/${id}?limit=1000`))).body.events as AuditEvent[];

describe("a deleted user's profile is shredded from the event log", () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-shred-users-'));
    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps profiles out of the log from the start, and deleted ones (v6, v2, the scheduler) out of every file, answer, export and log line', async () => {
    const [v6User, v2User, asyncUser, kept, batched] = ['v6-user', 'v2-user', 'async-user', 'kept', 'batched'].map(profile);
    for (const user of [v6User, v2User, asyncUser, kept]) await server.call('POST', v6('/users'), { body: user.body });
    await server.call('POST', v6('/batch_users'), { body: { users: [batched.body] } });
    // Updates: the deleted ones' and the kept one's (each field of the update carries a marker too).
    const [v6Update, keptUpdate] = ['v6-update', 'kept-update'].map(marker);
    await server.call('PUT', v6('/users/v6-user'), { body: { name: v6Update, custom_data: { note: v6Update } }, as: server.token({ sub: 'v6-user' }) });
    await server.call('PUT', v6('/users/kept'), { body: { name: keptUpdate } });
    const deleted = [...v6User.markers, ...v2User.markers, ...asyncUser.markers, v6Update];
    const notDeleted = [...kept.markers.slice(1), keptUpdate, ...batched.markers];
    const ids = ['v6-user', 'v2-user', 'async-user', 'kept', 'batched'];

    // Sealed from the start: no file of the data directory holds a profile; the API shows them.
    expect(scanForMarkers({ files: ['events.sqlite', 'events.sqlite-wal'].map((f) => join(dataDir, f)) }, [...deleted, ...notDeleted])).toEqual([]);
    const before = await answers(ids);
    for (const text of [...deleted, ...notDeleted]) expect(scanForMarkers({ texts: before }, [text])).not.toEqual([]);

    await server.call('DELETE', v6('/users/v6-user'));
    await server.call('DELETE', v2('/users/v2-user'));
    const job = (await server.call('PUT', scheduler('/users/async-user'))).body.id as string;
    await eventually(async () => (await server.call('GET', scheduler(`/status/${job}`))).body.status === 'completed', { what: 'the async delete job to complete' });

    const exported = await server.exportNow();
    const after = await answers(ids);
    expect(scanForMarkers({ folders: [dataDir, exported], texts: { ...after, log: server.log } }, deleted)).toEqual([]);

    // Nothing that was not deleted became unreadable.
    expect((await server.call('GET', v6('/users/kept'))).body).toMatchObject({ name: keptUpdate, avatar_url: kept.body.avatar_url, custom_data: kept.body.custom_data });
    expect((await server.call('GET', v6('/users/batched'))).body).toMatchObject({ name: batched.body.name, avatar_url: batched.body.avatar_url, custom_data: batched.body.custom_data });
    for (const text of [kept.markers[0], ...notDeleted]) expect(scanForMarkers({ folders: [exported], texts: after }, [text])).not.toEqual([]);

    // The audit and the export still say what happened, by whom and when: an erased profile.
    for (const id of ['v6-user', 'v2-user', 'async-user']) {
      const history = await auditOf(id);
      expect(history.map((e) => e.type)).toEqual(id === 'v6-user' ? ['UserCreated', 'UserUpdated', 'UserDeleted'] : ['UserCreated', 'UserDeleted']);
      expect(history.filter((e) => e.type !== 'UserDeleted').every((e) => e.data.erased === true)).toBe(true);
      expect(history[0].data.name).toBe('');
    }
    expect((await auditOf('kept')).some((e) => e.data.erased)).toBe(false);
    rmSync(join(exported, '..'), { recursive: true, force: true });

    await server.stop('SIGTERM');
    expect(scanForMarkers({ folders: [dataDir] }, deleted)).toEqual([]);
    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
    expect((await server.call('GET', v6('/users/kept'))).body.name).toBe(keptUpdate);
  }, 180_000);

  it('gives a user created again with the same id a profile of its own, read back whole, while the earlier one stays erased', async () => {
    const first = profile('again');
    await server.call('POST', v6('/users'), { body: first.body });
    await server.call('DELETE', v6('/users/again'));
    const second = profile('again');
    await server.call('POST', v6('/users'), { body: second.body });
    await server.call('PUT', v6('/users/again'), { body: { custom_data: { note: second.markers[2], more: 1 } } });

    expect((await server.call('GET', v6('/users/again'))).body).toMatchObject({ name: second.body.name, avatar_url: second.body.avatar_url, custom_data: { note: second.markers[2], more: 1 } });
    const history = await auditOf('again');
    expect(history.map((e) => [e.type, e.data.erased ?? false])).toEqual([
      ['UserCreated', true],
      ['UserDeleted', false],
      ['UserCreated', false],
      ['UserUpdated', false],
    ]);
    const exported = await server.exportNow();
    expect(scanForMarkers({ folders: [dataDir, exported], texts: { audit: JSON.stringify(history), log: server.log } }, first.markers)).toEqual([]);
    expect(scanForMarkers({ folders: [exported] }, second.markers)).toHaveLength(second.markers.length);
    rmSync(join(exported, '..'), { recursive: true, force: true });
  }, 120_000);
});

describe('a user delete whose process was killed before it destroyed the profile key', () => {
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is shredded by the next start before it serves anything', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-shred-users-crash-'));
    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
    const [doomed, kept] = ['doomed', 'kept'].map(profile);
    for (const user of [doomed, kept]) await server.call('POST', v6('/users'), { body: user.body });
    await server.stop('SIGKILL');
    // What a kill -9 between the delete's append and its destroy leaves: the delete in the log, the key still stored.
    const log = new SqliteEventStore(join(dataDir, 'events.sqlite'));
    const [creation] = await log.readStream(`user-${INSTANCE}.doomed`);
    const { created_at, profile_key } = creation.data as { created_at: string; profile_key: string };
    const now = new Date().toISOString();
    await log.append(
      `user-${INSTANCE}.doomed`,
      [{ type: 'UserDeleted', data: { deleted_at: now, user_created_at: created_at, profile_key }, metadata: { occurred_at: now } }],
      'any',
    );
    await log.close();

    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
    const exported = await server.exportNow();
    const read = await answers(['doomed', 'kept']);
    expect(scanForMarkers({ folders: [dataDir, exported], texts: read }, doomed.markers)).toEqual([]);
    expect((await server.call('GET', v6('/users/kept'))).body).toMatchObject({ name: kept.body.name, custom_data: kept.body.custom_data });
    rmSync(join(exported, '..'), { recursive: true, force: true });
  }, 120_000);
});

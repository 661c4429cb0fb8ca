import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, promises, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../read-models/sqlite/sqlite-read-model-store';
import { SqliteDataKeyStore } from '../data-keys/sqlite/sqlite-data-key-store';
import { Worker } from 'node:worker_threads';
import { checkpointsHostedElsewhere, WAL_SIZE_LIMIT_BYTES } from './sqlite-wal-checkpointer';
import { eventually } from '../../../test/support/waiting';

const PAGE = 4096;
/**
 * Each event's payload: a page of random bytes in base64, which the log's deflate (schema version
 * 3) cannot take below a page, so that an event takes more than a page of the file.
 */
const PAYLOAD_CHARS = 4 * Math.ceil(PAGE / 3);

/**
 * Whether every frame of the WAL has been copied into the database file, as SQLite's wal-index
 * (the -shm file, https://sqlite.org/walformat.html) says: `nBackfill` (offset 96) has reached the
 * header's `mxFrame` (offset 16). Then the writer's next commit starts the WAL over. Read from the
 * file, without a connection that could itself checkpoint or hold a snapshot.
 */
function backfilled(file: string): boolean {
  const index = readFileSync(`${file}-shm`).subarray(0, 136);
  return index.readUInt32LE(96) === index.readUInt32LE(16);
}

/** Waits (at most 30 s) until the thread has copied the whole WAL into the database file. */
async function checkpointed(file: string): Promise<void> {
  await eventually(() => backfilled(file), { timeoutMs: 30_000, what: `the WAL of ${file} checkpointed` });
}

/** Appends `events` events of a page each, all at once (group commits), and waits until the thread has checkpointed them; returns the WAL's size. */
async function appendRound(store: SqliteEventStore, file: string, round: number, events: number): Promise<number> {
  const payload = randomBytes(PAGE).toString('base64');
  await Promise.all(
    Array.from({ length: events }, (_, i) => store.append(`stream-${round}-${i}`, [{ type: 'Filled', data: { payload }, metadata: { occurred_at: new Date().toISOString() } }], 'no_stream')),
  );
  await checkpointed(file);
  return statSync(`${file}-wal`).size;
}

describe('WAL checkpoints from a worker thread', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-checkpointer-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies the WAL into the database file by itself, before the writer would checkpoint', async () => {
    const file = join(dir, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const before = statSync(file).size;
    // About 2,000 pages: fewer than the writer's own checkpoint waits for (WRITER_CHECKPOINT_PAGES).
    await appendRound(store, file, 0, 1_000);
    expect(statSync(file).size - before).toBeGreaterThan(1_000 * PAGE);
    await store.close();
  });

  it('keeps the event log WAL from growing with what was written, and the log reads back whole', async () => {
    const file = join(dir, 'events.sqlite');
    const store = new SqliteEventStore(file);
    // Each round writes about 3,000 pages: the WAL starts over when the writer's checkpoint finishes the thread's work.
    const afterFirst = await appendRound(store, file, 0, 1_500);
    for (let round = 1; round < 4; round++) await appendRound(store, file, round, 1_500);
    expect(statSync(`${file}-wal`).size).toBeLessThan(2 * afterFirst);
    const events = await store.readAll({ maxCount: 10_000 });
    expect(events).toHaveLength(6_000);
    expect(events.every((e) => (e.data as { payload: string }).payload.length === PAYLOAD_CHARS)).toBe(true);
    await store.close();
    // The thread's connection closed first: the store's close was the last one and removed the WAL.
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('cuts a WAL that a burst grew back to WAL_SIZE_LIMIT_BYTES once it starts over', async () => {
    const file = join(dir, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const afterBurst = await appendRound(store, file, 0, 1_500);
    expect(afterBurst).toBeGreaterThan(2 * WAL_SIZE_LIMIT_BYTES);
    let round = 1;
    await eventually(
      async () => {
        await appendRound(store, file, round++, 1);
        return statSync(`${file}-wal`).size <= WAL_SIZE_LIMIT_BYTES;
      },
      { timeoutMs: 30_000, what: 'the WAL cut back' },
    );
    await store.close();
  });

  it('closes the read-model store cleanly too, leaving no WAL behind', async () => {
    const file = join(dir, 'read-models.sqlite');
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([{ name: 'things', indexes: [] }]);
    await store.applyBatch([{ collection: 'things', kind: 'put', document: { _id: 'a', n: 1 }, position: '1' }], {});
    await store.close();
    expect(existsSync(`${file}-wal`)).toBe(false);
    const reopened = new SqliteReadModelStore(file);
    expect(await reopened.get('things', 'a')).toMatchObject({ n: 1 });
    await reopened.close();
  });

  it('checkpoints every file of the process from one thread, stopped with the last file closed', async () => {
    const threads = () => readdirSync('/proc/self/task').length;
    await promises.stat(dir); // libuv's thread pool starts with its first use: before counting
    const before = threads();
    const events = new SqliteEventStore(join(dir, 'events.sqlite'));
    const readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    const keys = new SqliteDataKeyStore(join(dir, 'keys.sqlite'));
    expect(threads()).toBe(before + 1);
    await events.append('s', [{ type: 'Filled', data: { n: 1 }, metadata: { occurred_at: new Date().toISOString() } }], 'no_stream');
    await readModels.ensureCollections([{ name: 'things', indexes: [] }]);
    await readModels.applyBatch([{ collection: 'things', kind: 'put', document: { _id: 'a', n: 1 }, position: '1' }], {});
    await Promise.all([checkpointed(join(dir, 'events.sqlite')), checkpointed(join(dir, 'read-models.sqlite'))]);
    await events.close();
    await readModels.close();
    expect(threads()).toBe(before + 1);
    await keys.close();
    await eventually(() => threads() === before, { timeoutMs: 10_000, what: 'the checkpoint thread stopped' });
  });

  it('checkpoints from a thread that hosts the service for the process, and moves to the next host when that thread ends: no thread for checkpoints alone', async () => {
    // The host runs the build (as the projector thread does: tests that start servers build first).
    const built = join(__dirname, '..', '..', '..', 'dist', 'src', 'adapters');
    const threads = () => readdirSync('/proc/self/task').length;
    await promises.stat(dir);
    const before = threads();
    const here = join(dir, 'read-models.sqlite');
    const readModels = new SqliteReadModelStore(here);
    expect(threads()).toBe(before + 1); // no host yet: a thread of its own
    const there = join(dir, 'other.sqlite');
    const code = `
      const { parentPort, workerData } = require('node:worker_threads');
      require(workerData.built + '/shared/sqlite-wal-checkpointer.js').hostCheckpoints(workerData.port);
      const { SqliteReadModelStore } = require(workerData.built + '/read-models/sqlite/sqlite-read-model-store.js');
      (async () => {
        const store = new SqliteReadModelStore(workerData.file);
        await store.ensureCollections([{ name: 'things', indexes: [] }]);
        await store.applyBatch([{ collection: 'things', kind: 'put', document: { _id: 'a', n: 1 }, position: '1' }], {});
        parentPort.postMessage('written');
        parentPort.once('message', async () => { await store.close(); parentPort.close(); });
      })();
    `;
    const startHost = async () => {
      const port = checkpointsHostedElsewhere();
      const host = new Worker(code, { eval: true, workerData: { built, file: there, port }, transferList: [port] });
      await new Promise((resolve, reject) => {
        host.once('message', resolve);
        host.once('error', reject);
      });
      return host;
    };
    const write = async (n: number) => {
      await readModels.applyBatch([{ collection: 'things', kind: 'put', document: { _id: `d${n}`, n }, position: String(n) }], {});
      await checkpointed(here);
    };
    await readModels.ensureCollections([{ name: 'things', indexes: [] }]);

    let host = await startHost();
    // The thread of its own stopped: its checkpointer moved to the host, which serves both isolates.
    await eventually(() => threads() === before + 1, { timeoutMs: 10_000, what: 'the checkpoint thread of its own stopped' });
    await write(2);
    await checkpointed(there);
    await readModels.overwriteFreedSpace(); // a TRUNCATE checkpoint, on the host
    expect(statSync(`${here}-wal`).size).toBe(0);

    // The host ends without warning (a crash): a delete's TRUNCATE checkpoint does not wait for
    // the next host (a thread of its own does it), and the next host serves this isolate again.
    await host.terminate();
    expect(threads()).toBe(before);
    await readModels.applyBatch([{ collection: 'things', kind: 'put', document: { _id: 'between', n: 0 }, position: '2' }], {});
    await readModels.overwriteFreedSpace();
    expect(statSync(`${here}-wal`).size).toBe(0);
    expect(threads()).toBe(before + 1);
    host = await startHost();
    await eventually(() => threads() === before + 1, { timeoutMs: 10_000, what: 'the thread of its own stopped once the next host served' });
    await write(3);
    await readModels.overwriteFreedSpace();
    expect(statSync(`${here}-wal`).size).toBe(0);
    expect(threads()).toBe(before + 1);

    const exited = new Promise((resolve) => host.once('exit', resolve));
    host.postMessage('close');
    await exited;
    expect(existsSync(`${there}-wal`)).toBe(false);
    await readModels.close();
    expect(existsSync(`${here}-wal`)).toBe(false);
    expect(threads()).toBe(before);
  });

  it('overwrites what deleted and replaced documents left, in the database file and its WAL, on demand', async () => {
    const file = join(dir, 'read-models.sqlite');
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([{ name: 'things', indexes: [{ fields: ['note'] }] }]);
    const put = (id: string, note: string, position: string) =>
      ({ collection: 'things', kind: 'put', document: { _id: id, note }, position }) as const;
    await store.applyBatch([put('gone', 'MARKER-deleted-0001', '1'), put('edited', 'MARKER-before-0002', '2'), put('kept', 'MARKER-kept-0003', '3')], {});
    await store.applyBatch([{ collection: 'things', kind: 'delete', id: 'gone' }, put('edited', 'MARKER-after-0004', '4')], {});
    const scan = () => [file, `${file}-wal`].map((f) => (existsSync(f) ? readFileSync(f).toString('latin1') : '')).join('\n');
    expect(scan()).toContain('MARKER-deleted-0001'); // the WAL still has the older page images

    await store.overwriteFreedSpace();
    expect(statSync(`${file}-wal`).size).toBe(0);
    expect(scan()).not.toContain('MARKER-deleted-0001');
    expect(scan()).not.toContain('MARKER-before-0002');
    expect(scan()).toContain('MARKER-after-0004');
    expect(scan()).toContain('MARKER-kept-0003');
    expect(await store.get('things', 'kept')).toMatchObject({ note: 'MARKER-kept-0003' });
    await store.close();
  });

  it('closes at once a checkpointer whose host never started (a start that failed before its projector thread ran)', async () => {
    const port = checkpointsHostedElsewhere();
    const store = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    await store.close();
    port.close();
  });
});

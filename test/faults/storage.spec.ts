import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { EventStoreUnavailableError, EventToAppend } from '../../src/shared/ports/event-store.port';
import { asRoot, mountTmpfs } from '../support/volumes';

/**
 * The event log on a full disk and behind another process's write lock, on real files:
 * a small tmpfs when the test runs as root, otherwise SQLite's page limit with a filler
 * table that takes the room (both free it again by deleting the filler).
 */

interface FullDisk {
  readonly file: string;
  readonly store: SqliteEventStore;
  /** Takes room the log then runs out of. */
  fill(): void;
  free(): void;
  close(): Promise<void>;
}

async function fullDisk(): Promise<FullDisk> {
  const dir = mkdtempSync(join(tmpdir(), 'parley-full-'));
  if (asRoot) {
    mountTmpfs(dir, '1m');
    const file = join(dir, 'events.sqlite');
    const store = new SqliteEventStore(file, { pollMs: 50 });
    const filler = join(dir, 'filler');
    return {
      file,
      store,
      fill: () => writeFileSync(filler, Buffer.alloc(256 * 1024, 1)),
      free: () => unlinkSync(filler),
      async close() {
        await store.close();
        execFileSync('umount', [dir]);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const file = join(dir, 'events.sqlite');
  // The page limit holds for the store's connection; the filler is written through another.
  const store = new SqliteEventStore(file, { pollMs: 50, maxPageCount: 256 });
  const other = new Database(file);
  other.exec('CREATE TABLE filler (bytes BLOB)');
  return {
    file,
    store,
    fill: () => {
      const insert = other.prepare('INSERT INTO filler VALUES (?)');
      for (let i = 0; i < 16; i++) insert.run(Buffer.alloc(16 * 1024, 1));
    },
    free: () => other.exec('DELETE FROM filler'), // its pages go to the free list, which appends reuse
    async close() {
      other.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const event = (n: number): EventToAppend => ({
  id: randomUUID(),
  type: 'Filled',
  data: { n, padding: 'x'.repeat(4000) },
  metadata: { occurred_at: new Date().toISOString() },
});

describe(`the SQLite event log on a full disk (${asRoot ? 'tmpfs' : 'page limit'})`, () => {
  let disk: FullDisk;
  beforeAll(async () => {
    disk = await fullDisk();
  });
  afterAll(() => disk.close());

  it('fails appends as "the disk is full", stores none of them, and writes again on the same connection once room is freed', async () => {
    const { store } = disk;
    disk.fill();
    const stored: EventToAppend[] = [];
    let failure: unknown = null;
    for (let n = 0; n < 5000 && !failure; n++) {
      const e = event(n);
      try {
        await store.append('full-a', [e], stored.length === 0 ? 'no_stream' : stored.length - 1);
        stored.push(e);
      } catch (error) {
        failure = error;
      }
    }
    expect(failure).toBeInstanceOf(EventStoreUnavailableError);
    expect((failure as EventStoreUnavailableError).reason).toBe('the disk is full');
    expect(stored.length).toBeGreaterThan(0);

    // A group of concurrent appends (one transaction): each answer matches the log.
    const group = Array.from({ length: 5 }, (_, i) => event(1000 + i));
    const answers = await Promise.allSettled(group.map((e, i) => store.append(`full-group-${i}`, [e], 'no_stream')));
    for (const [i, answer] of answers.entries()) {
      const inLog = (await store.readStream(`full-group-${i}`)).map((r) => r.id);
      if (answer.status === 'fulfilled') expect(inLog).toEqual([group[i].id]);
      else {
        expect((answer.reason as EventStoreUnavailableError).reason).toBe('the disk is full');
        expect(inLog).toEqual([]);
      }
    }

    // Every acknowledged append is there, in order; the failed one is not.
    const log = await store.readStream('full-a');
    expect(log.map((r) => r.id)).toEqual(stored.map((e) => e.id));

    disk.free();
    const after = event(9999);
    const result = await store.append('full-a', [after], stored.length - 1);
    expect(result.nextExpectedRevision).toBe(stored.length);
    expect((await store.readStream('full-a', { fromRevision: stored.length })).map((r) => r.id)).toEqual([after.id]);
  });
});

describe('the SQLite event log behind another connection holding its write lock', () => {
  let dir: string;
  let store: SqliteEventStore;
  let holder: Database.Database;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-locked-'));
    mkdirSync(dir, { recursive: true });
    // Room for the release below (50 ms) to come well within the timeout on a loaded machine.
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { pollMs: 50, lockTimeoutMs: 1_500 });
    holder = new Database(join(dir, 'events.sqlite'));
  });
  afterAll(async () => {
    if (holder.inTransaction) holder.exec('ROLLBACK');
    holder.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers "locked" past its lock timeout without blocking the event loop, then writes once the lock is released', async () => {
    holder.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const refused = event(1);
    const failure = await store.append('locked-a', [refused], 'no_stream').catch((error: unknown) => error);
    clearInterval(ticker);
    expect(failure).toBeInstanceOf(EventStoreUnavailableError);
    expect((failure as EventStoreUnavailableError).reason).toBe('the event log is locked by another process');
    // Timers ran while the append waited: the wait for the lock is not a synchronous busy wait.
    expect(ticks).toBeGreaterThan(0);

    const accepted = event(2);
    const pending = store.append('locked-a', [accepted], 'no_stream');
    setTimeout(() => holder.exec('COMMIT'), 50);
    await pending;
    expect((await store.readStream('locked-a')).map((r) => r.id)).toEqual([accepted.id]);
  });
});

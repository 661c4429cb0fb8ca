import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStoreUnavailableError, EventToAppend, SpaceLeft } from '../../../shared/ports/event-store.port';
import { SqliteEventStore } from './sqlite-event-store';
import { describeAsRoot, mountTmpfs } from '../../../../test/support/volumes';

/**
 * spaceLeft on real files, on the two "disks" the fault tests use: SQLite's page limit (any user)
 * and a small tmpfs (root only). It follows what takes and frees room, names what bounds it,
 * writes nothing, and an append refused for room comes only when it said little was left.
 * The figures are compared with what the test itself added or removed, never with what the log's
 * own WAL and checkpoints happen to hold at a given moment (a thread of their own moves those).
 */
const LARGE = 256 * 1024;
const CHUNK = Buffer.alloc(LARGE, 1);
/** What the log's own bookkeeping may take or give beside the filler between two readings. */
const SLACK = 256 * 1024;

interface Disk {
  readonly store: SqliteEventStore;
  readonly limitedBy: SpaceLeft['limitedBy'];
  /** Adds a chunk of filler beside the log; false once there is no room for it. */
  fillMore(): boolean;
  free(): void;
  close(): Promise<void>;
}

function pageLimitDisk(): Disk {
  const dir = mkdtempSync(join(tmpdir(), 'parley-space-'));
  const file = join(dir, 'events.sqlite');
  // 16 MiB at 4 KiB pages; the filler goes through another connection (the limit is the store's).
  const store = new SqliteEventStore(file, { pollMs: 50, maxPageCount: 4096 });
  const other = new Database(file);
  other.exec('CREATE TABLE filler (bytes BLOB)');
  const insert = other.prepare('INSERT INTO filler VALUES (?)');
  return {
    store,
    limitedBy: 'page_limit',
    fillMore: () => {
      const used = Number(other.pragma('page_count', { simple: true })) - Number(other.pragma('freelist_count', { simple: true }));
      if (used + CHUNK.length / 4096 + 16 >= 4096) return false;
      insert.run(CHUNK);
      return true;
    },
    free: () => other.exec('DELETE FROM filler'),
    async close() {
      other.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function tmpfsDisk(): Disk {
  const dir = mkdtempSync(join(tmpdir(), 'parley-space-tmpfs-'));
  mountTmpfs(dir, '32m');
  const store = new SqliteEventStore(join(dir, 'events.sqlite'), { pollMs: 50 });
  const filler = join(dir, 'filler');
  return {
    store,
    limitedBy: 'volume',
    fillMore: () => {
      try {
        appendFileSync(filler, CHUNK);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        return false;
      }
    },
    free: () => rmSync(filler, { force: true }),
    async close() {
      await store.close();
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const event = (bytes: number): EventToAppend => ({
  id: randomUUID(),
  type: 'Filled',
  data: { padding: 'x'.repeat(bytes) },
  metadata: { occurred_at: new Date().toISOString() },
});

const spaceLeft = async (store: SqliteEventStore): Promise<SpaceLeft> => {
  const space = await store.spaceLeft();
  expect(space).not.toBeNull();
  return space!;
};

async function followsTheRoomTaken(disk: Disk): Promise<void> {
  const { store } = disk;
  await store.append('first', [event(10)], 'no_stream');
  const head = await store.headPosition();
  const empty = await spaceLeft(store);
  expect(empty.limitedBy).toBe(disk.limitedBy);
  // Asking writes nothing to the log.
  expect(await store.headPosition()).toBe(head);

  let filled = 0;
  for (let n = 0; n < 16 && disk.fillMore(); n++) filled += CHUNK.length;
  expect(filled).toBeGreaterThan(4 * CHUNK.length);
  const afterFilling = await spaceLeft(store);
  expect(empty.bytes - afterFilling.bytes).toBeGreaterThanOrEqual(filled - SLACK);
  expect(empty.bytes - afterFilling.bytes).toBeLessThanOrEqual(filled + SLACK);

  disk.free();
  const afterFreeing = await spaceLeft(store);
  expect(afterFreeing.bytes - afterFilling.bytes).toBeGreaterThanOrEqual(filled - SLACK);
  expect(await store.headPosition()).toBe(head);
}

async function refusedOnlyWhenLittleWasLeft(disk: Disk): Promise<void> {
  const { store } = disk;
  let refusal: unknown = null;
  let before: SpaceLeft | null = null;
  let filled = 0;
  let appended = 0;
  for (let n = 0; n < 2000 && !refusal; n++) {
    // Twice as much filler as log, so that freeing the filler leaves room to spare.
    for (let i = 0; i < 2; i++) if (disk.fillMore()) filled += CHUNK.length;
    before = await spaceLeft(store);
    refusal = await store.append(`large-${n}`, [event(LARGE)], 'no_stream').then(
      () => {
        appended += LARGE;
        return null;
      },
      (error: unknown) => error,
    );
  }
  expect(refusal).toBeInstanceOf(EventStoreUnavailableError);
  expect((refusal as EventStoreUnavailableError).reason).toBe('the disk is full');
  // An append takes its payload in the WAL and again in the database file, plus index pages.
  expect(before!.bytes).toBeLessThan(4 * LARGE + SLACK);

  // Room comes back when the filler goes, less what the log's WAL still holds for its database
  // file (on a full volume its checkpoints could not copy it in), and appends fit again.
  const full = await spaceLeft(store);
  disk.free();
  expect((await spaceLeft(store)).bytes - full.bytes).toBeGreaterThanOrEqual(filled - appended - SLACK);
  await store.append('large-after', [event(LARGE)], 'no_stream');
}

describe("SqliteEventStore.spaceLeft on SQLite's page limit", () => {
  let disk: Disk;
  beforeEach(() => {
    disk = pageLimitDisk();
  });
  afterEach(() => disk.close());

  it('follows the room taken and freed beside the log, names the page limit, and writes nothing', () => followsTheRoomTaken(disk));
  it('is small whenever an append is refused for room', () => refusedOnlyWhenLittleWasLeft(disk));
});

describeAsRoot('SqliteEventStore.spaceLeft on a small tmpfs', () => {
  let disk: Disk;
  beforeEach(() => {
    disk = tmpfsDisk();
  });
  afterEach(() => disk.close());

  it("follows the room taken and freed beside the log, names the volume, and writes nothing", () => followsTheRoomTaken(disk));
  it('is small whenever an append is refused for room', () => refusedOnlyWhenLittleWasLeft(disk));
});

import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStoreUnavailableError, EventToAppend } from '../../../shared/ports/event-store.port';
import { SqliteEventStore } from './sqlite-event-store';
import { describeAsRoot, mountTmpfs } from '../../../../test/support/volumes';

/**
 * roomFor on real files, on the two "disks" the fault tests use: SQLite's page limit (any user)
 * and a small tmpfs (root only). Whenever an append is refused "disk is full", roomFor asked just
 * before said so, while small appends still fit; it writes nothing; it says the log fits again
 * as soon as room is freed.
 */
const LARGE = 256 * 1024;
/** As much filler as the large append, so that freeing it leaves room for large appends again. */
const CHUNK = Buffer.alloc(LARGE, 1);

interface Disk {
  readonly store: SqliteEventStore;
  readonly file: string;
  /** Takes a little more room; false once there is none left to take. */
  fillMore(): boolean;
  free(): void;
  close(): Promise<void>;
}

function pageLimitDisk(): Disk {
  const dir = mkdtempSync(join(tmpdir(), 'parley-room-'));
  const file = join(dir, 'events.sqlite');
  // 16 MiB at 4 KiB pages; the filler goes through another connection (the limit is the store's).
  const store = new SqliteEventStore(file, { pollMs: 50, maxPageCount: 4096 });
  const other = new Database(file);
  other.exec('CREATE TABLE filler (bytes BLOB)');
  const insert = other.prepare('INSERT INTO filler VALUES (?)');
  return {
    store,
    file,
    fillMore: () => {
      const used = Number(other.pragma('page_count', { simple: true })) - Number(other.pragma('freelist_count', { simple: true }));
      if (used >= 4096) return false;
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
  const dir = mkdtempSync(join(tmpdir(), 'parley-room-tmpfs-'));
  mountTmpfs(dir, '32m');
  const file = join(dir, 'events.sqlite');
  const store = new SqliteEventStore(file, { pollMs: 50 });
  const filler = join(dir, 'filler');
  return {
    store,
    file,
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

async function refusedOnlyWhenRoomSaidSo(disk: Disk): Promise<void> {
  const { store } = disk;
  expect(await store.roomFor(LARGE)).toBeNull();
  let refusal: unknown = null;
  let roomBefore: string | null = null;
  for (let n = 0; n < 2000 && !refusal; n++) {
    disk.fillMore();
    roomBefore = await store.roomFor(LARGE);
    refusal = await store.append(`large-${n}`, [event(LARGE)], 'no_stream').then(
      () => null,
      (error: unknown) => error,
    );
  }
  expect(refusal).toBeInstanceOf(EventStoreUnavailableError);
  expect((refusal as EventStoreUnavailableError).reason).toBe('the disk is full');
  expect(roomBefore).toMatch(/^the disk is full: /);

  // What made /health lie: with room for small writes but not for the large one, small appends
  // succeed, and roomFor keeps saying the large one does not fit.
  disk.free();
  while ((await store.roomFor(LARGE)) === null) expect(disk.fillMore()).toBe(true);
  await store.append('small-1', [event(10)], 'no_stream');
  await store.append('small-2', [event(10)], 'no_stream');
  // Asking writes nothing to the log (its head stays where it is).
  const head = await store.headPosition();
  expect(await store.roomFor(LARGE)).toMatch(/^the disk is full: /);
  expect(await store.headPosition()).toBe(head);

  disk.free();
  expect(await store.roomFor(LARGE)).toBeNull();
  await store.append('large-after', [event(LARGE)], 'no_stream');
}

describe('SqliteEventStore.roomFor on SQLite\'s page limit', () => {
  let disk: Disk;
  beforeEach(() => {
    disk = pageLimitDisk();
  });
  afterEach(() => disk.close());

  it('says the disk is full before every append refused for room, while small appends fit, without writing, and fits again once room is freed', () =>
    refusedOnlyWhenRoomSaidSo(disk));

  it('names the page limit', async () => {
    expect(await disk.store.roomFor(64 * 1024 * 1024)).toMatch(/^the disk is full: the event log's page limit leaves \d+ pages, an append of 67108864 bytes needs up to \d+$/);
  });
});

const TMPFS = 'SqliteEventStore.roomFor on a small tmpfs';
describeAsRoot(TMPFS, () => {
  let disk: Disk;
  beforeEach(() => {
    disk = tmpfsDisk();
  });
  afterEach(() => disk.close());

  it('says the disk is full before every append refused for room, while small appends fit, without writing, and fits again once room is freed', () =>
    refusedOnlyWhenRoomSaidSo(disk));

  it('names the free space of the volume', async () => {
    expect(await disk.store.roomFor(64 * 1024 * 1024)).toMatch(/^the disk is full: \d+ bytes free on the event log's volume, an append of 67108864 bytes needs up to \d+$/);
  });
});

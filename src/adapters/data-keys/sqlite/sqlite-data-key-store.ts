import Database from 'better-sqlite3';
import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { DataKeySelector, DataKeyStore, StoredDataKey } from '../../../shared/ports/data-key-store.port';
import { SchemaMigration } from '../../shared/sqlite-schema-versions';
import { IN_MEMORY, openSqliteFile } from '../../shared/sqlite-file';
import { compactSqliteFile } from '../../shared/sqlite-compaction';
import { WalCheckpointer } from '../../shared/sqlite-wal-checkpointer';

export const DATA_KEY_MIGRATIONS: readonly SchemaMigration[] = [
  {
    version: 1,
    description: 'the data_keys table, by id and by owner',
    up: (db) =>
      db.exec(`
        CREATE TABLE IF NOT EXISTS data_keys (
          id         TEXT PRIMARY KEY,
          owner      TEXT,
          wrapped    TEXT NOT NULL,
          created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS data_keys_by_owner ON data_keys (owner) WHERE owner IS NOT NULL;
      `),
  },
];

/** Above every character a key id holds: `prefix` .. `prefix + PREFIX_END` is the range of ids under it. */
const PREFIX_END = '\u{10FFFF}';

/**
 * Keys inserted per transaction: a group larger than this (a reserved block makes a thousand) is
 * written in several, a turn of the event loop apart, and made durable by one flush of the WAL
 * after the last, so that serving is never held up for a whole block's inserts at once.
 */
export const KEYS_PER_TRANSACTION = 200;

interface KeyToCreate {
  readonly key: StoredDataKey;
  /** The answer of the create it came with. */
  readonly stored: Map<string, string>;
}

interface PendingCreate {
  readonly keys: readonly StoredDataKey[];
  resolve(stored: Map<string, string>): void;
  reject(error: unknown): void;
}

export interface SqliteDataKeyStoreOptions {
  /**
   * Whether each destroy that took a key copies the WAL back into the file and empties it
   * (default): one durable write each. An offline run of many destroys (data-dir:seal) turns it
   * off and calls `compact` once at its end instead; until then the destroyed keys' older pages
   * are still in the WAL.
   */
  readonly emptyWalAfterEachDestroy?: boolean;
}

/**
 * The embedded data-key store, `DATA_DIR/keys.sqlite` (0600). Creates that arrive in the same
 * turn of the event loop share one transaction (`KEYS_PER_TRANSACTION` keys at most per turn),
 * and one `fdatasync` of the WAL on the thread pool (the event log's own scheme): a key is on
 * disk before the event it seals is appended, and the event loop serves on meanwhile. `secure_delete` overwrites a destroyed key's bytes
 * in its page, and a destroy checkpoints and truncates the WAL, so no older frame of the page
 * keeps the key: on a thread (WalCheckpointer), never on the event loop, one truncation for
 * the destroys that arrive while another runs (a Beams publish's key goes with each delivery).
 */
export class SqliteDataKeyStore implements DataKeyStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, string | null, string, number]>;
  private readonly select: Database.Statement<[string], { wrapped: string }>;
  /** Inserts keys, each answered into the map of the create it came with. */
  private readonly createSome: Database.Transaction<(keys: readonly KeyToCreate[]) => void>;
  private queue: PendingCreate[] = [];
  private flushScheduled = false;
  /** Groups being written (over several turns): closing waits for them. */
  private readonly flushing = new Set<Promise<void>>();
  private walFd: number | null = null;
  private closed = false;
  private checkpointer: WalCheckpointer | null;
  /** The truncation the next destroys join (not begun yet), and the last one begun. */
  private nextTruncation: Promise<void> | null = null;
  private lastTruncation: Promise<void> = Promise.resolve();

  constructor(
    private readonly file: string,
    private readonly options: SqliteDataKeyStoreOptions = {},
  ) {
    this.db = openSqliteFile(file, { migrations: DATA_KEY_MIGRATIONS, busyTimeoutMs: 5_000 });
    // No RETURNING: it doubles what each insert costs (a block makes a thousand); `changes` says whether the row is ours.
    this.insert = this.db.prepare('INSERT OR IGNORE INTO data_keys (id, owner, wrapped, created_at) VALUES (?, ?, ?, ?)');
    this.select = this.db.prepare('SELECT wrapped FROM data_keys WHERE id = ?');
    this.createSome = this.db.transaction((keys: readonly KeyToCreate[]) => {
      const now = Date.now();
      for (const { key, stored } of keys) {
        // An id already stored keeps its first key.
        const inserted = this.insert.run(key.id, key.owner, key.wrapped, key.createdAt ?? now).changes === 1;
        stored.set(key.id, inserted ? key.wrapped : this.select.get(key.id)!.wrapped);
      }
    });
    // A process killed between a commit and its flush left the commit in the WAL: on disk before anything reads it.
    this.flushWalSync();
    this.checkpointer = file === IN_MEMORY ? null : new WalCheckpointer(file);
  }

  create(keys: readonly StoredDataKey[]): Promise<Map<string, string>> {
    if (this.closed) return Promise.reject(new Error('the data-key store is closed'));
    if (keys.length === 0) return Promise.resolve(new Map());
    return new Promise((resolve, reject) => {
      this.queue.push({ keys, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.track(this.flush()));
      }
    });
  }

  async getMany(ids: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const id of new Set(ids)) {
      const row = this.select.get(id);
      if (row) found.set(id, row.wrapped);
    }
    return found;
  }

  async destroy(selector: DataKeySelector): Promise<number> {
    const upTo = selector.createdUpTo ?? Number.MAX_SAFE_INTEGER;
    const deleted = this.db.transaction(() => {
      if ('ids' in selector) {
        const remove = this.db.prepare('DELETE FROM data_keys WHERE id = ? AND created_at <= ?');
        return selector.ids.reduce((n, id) => n + remove.run(id, upTo).changes, 0);
      }
      if ('prefix' in selector || 'prefixes' in selector) {
        const remove = this.db.prepare('DELETE FROM data_keys WHERE id >= ? AND id < ? AND created_at <= ?');
        const prefixes = 'prefix' in selector ? [selector.prefix] : selector.prefixes;
        return prefixes.reduce((n, prefix) => n + remove.run(prefix, prefix + PREFIX_END, upTo).changes, 0);
      }
      return this.db.prepare('DELETE FROM data_keys WHERE owner = ? AND created_at <= ?').run(selector.owner, upTo).changes;
    })();
    // The WAL still holds the pages as they were before: copied back (overwritten, secure_delete) and emptied.
    if (deleted > 0 && (this.options.emptyWalAfterEachDestroy ?? true)) await this.emptyWal();
    return deleted;
  }

  /**
   * Rebuilds the file from its live keys and empties its WAL (`compactSqliteFile`): nothing
   * destroyed is left in either. The checkpoint thread is stopped meanwhile (a checkpoint of its
   * connection would keep the WAL from being emptied) and started again after.
   */
  async compact(): Promise<void> {
    const checkpointer = this.checkpointer;
    if (checkpointer !== null) {
      this.checkpointer = null;
      await this.lastTruncation.catch(() => undefined);
      await checkpointer.close();
    }
    try {
      compactSqliteFile(this.db, this.file);
    } finally {
      if (checkpointer !== null) this.checkpointer = new WalCheckpointer(this.file);
    }
  }

  /** A TRUNCATE checkpoint begun after this call: destroys made while one runs share the next. */
  private emptyWal(): Promise<void> {
    const checkpointer = this.checkpointer;
    if (checkpointer === null) return Promise.resolve();
    this.nextTruncation ??= this.lastTruncation
      .catch(() => undefined)
      .then(() => {
        this.nextTruncation = null;
        return checkpointer.truncate();
      });
    this.lastTruncation = this.nextTruncation;
    return this.nextTruncation;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.queue.length) await this.track(this.flush());
    while (this.flushing.size) await Promise.all([...this.flushing]);
    await this.lastTruncation.catch(() => undefined);
    await this.checkpointer?.close();
    if (this.walFd !== null) closeSync(this.walFd);
    this.db.close();
  }

  private track(flush: Promise<void>): Promise<void> {
    this.flushing.add(flush);
    return flush.finally(() => this.flushing.delete(flush));
  }

  /** Writes the creates queued so far, `KEYS_PER_TRANSACTION` at a time, then flushes the WAL once; answers each when all are durable. */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const items = this.queue;
    this.queue = [];
    if (items.length === 0) return;
    const results = items.map(() => new Map<string, string>());
    const pending: KeyToCreate[] = items.flatMap((item, i) => item.keys.map((key) => ({ key, stored: results[i] })));
    try {
      for (let from = 0; from < pending.length; from += KEYS_PER_TRANSACTION) {
        if (from > 0) await new Promise((resolve) => setImmediate(resolve));
        this.createSome.immediate(pending.slice(from, from + KEYS_PER_TRANSACTION));
      }
      await this.flushWal();
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    items.forEach((item, i) => item.resolve(results[i]));
  }

  private flushWal(): Promise<void> {
    const fd = this.walDescriptor();
    if (fd === null) return Promise.resolve();
    return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  }

  private flushWalSync(): void {
    const fd = this.walDescriptor();
    if (fd !== null) fdatasyncSync(fd);
  }

  private walDescriptor(): number | null {
    if (this.walFd === null) {
      try {
        this.walFd = openSync(`${this.file}-wal`, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    }
    return this.walFd;
  }
}

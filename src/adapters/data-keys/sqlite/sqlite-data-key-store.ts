import Database from 'better-sqlite3';
import { closeSync, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { DataKeySelector, DataKeyStore, StoredDataKey } from '../../../shared/ports/data-key-store.port';
import { SchemaMigration } from '../../shared/sqlite-schema-versions';
import { IN_MEMORY, openSqliteFile } from '../../shared/sqlite-file';
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

interface PendingCreate {
  readonly keys: readonly StoredDataKey[];
  resolve(stored: Map<string, string>): void;
  reject(error: unknown): void;
}

/**
 * The embedded data-key store, `DATA_DIR/keys.sqlite` (0600). Creates that arrive in the same
 * turn of the event loop share one transaction, and one `fdatasync` of the WAL on the thread
 * pool (the event log's own scheme): a key is on disk before the event it seals is appended,
 * and the event loop serves on meanwhile. `secure_delete` overwrites a destroyed key's bytes
 * in its page, and a destroy checkpoints and truncates the WAL, so no older frame of the page
 * keeps the key: on a thread (WalCheckpointer), never on the event loop, one truncation for
 * the destroys that arrive while another runs (a Beams publish's key goes with each delivery).
 */
export class SqliteDataKeyStore implements DataKeyStore {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<[string, string | null, string, number], { wrapped: string }>;
  private readonly select: Database.Statement<[string], { wrapped: string }>;
  private readonly createGroup: Database.Transaction<(items: readonly PendingCreate[]) => Map<string, string>[]>;
  private queue: PendingCreate[] = [];
  private flushScheduled = false;
  private walFd: number | null = null;
  private closed = false;
  private readonly checkpointer: WalCheckpointer | null;
  /** The truncation the next destroys join (not begun yet), and the last one begun. */
  private nextTruncation: Promise<void> | null = null;
  private lastTruncation: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {
    this.db = openSqliteFile(file, { migrations: DATA_KEY_MIGRATIONS, busyTimeoutMs: 5_000 });
    this.insert = this.db.prepare('INSERT OR IGNORE INTO data_keys (id, owner, wrapped, created_at) VALUES (?, ?, ?, ?) RETURNING wrapped');
    this.select = this.db.prepare('SELECT wrapped FROM data_keys WHERE id = ?');
    this.createGroup = this.db.transaction((items: readonly PendingCreate[]) => {
      const now = Date.now();
      return items.map(({ keys }) => {
        const stored = new Map<string, string>();
        for (const key of keys) {
          // A row only when inserted; an id already stored keeps its first key.
          stored.set(key.id, (this.insert.get(key.id, key.owner, key.wrapped, now) ?? this.select.get(key.id)!).wrapped);
        }
        return stored;
      });
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
        setImmediate(() => this.flush());
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
    if (deleted > 0) await this.emptyWal();
    return deleted;
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
    if (this.queue.length) await this.flush();
    await this.lastTruncation.catch(() => undefined);
    await this.checkpointer?.close();
    if (this.walFd !== null) closeSync(this.walFd);
    this.db.close();
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const items = this.queue;
    this.queue = [];
    if (items.length === 0) return;
    let results: Map<string, string>[];
    try {
      results = this.createGroup.immediate(items);
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    try {
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

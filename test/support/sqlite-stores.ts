import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore, SqliteReadModelStoreOptions } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';

/** An event log and read models on real SQLite files in a directory of their own, and their removal. */
export interface SqliteStores {
  readonly dir: string;
  readonly events: SqliteEventStore;
  readonly readModels: SqliteReadModelStore;
  close(): Promise<void>;
}

/** Opens both stores in a new temporary directory named `<prefix>…`. */
export function openSqliteStores(prefix: string): SqliteStores {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const events = new SqliteEventStore(join(dir, 'events.sqlite'));
  const readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
  return {
    dir,
    events,
    readModels,
    async close() {
      await events.close();
      await readModels.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Read models alone, on a real SQLite file in a new temporary directory named `<prefix>…`. */
export interface SqliteReadModels<S extends SqliteReadModelStore = SqliteReadModelStore> {
  readonly dir: string;
  readonly readModels: S;
  close(): Promise<void>;
}

/** Opens a read-model store (by default the plain SQLite one; `open` makes a subclass of it) in a new temporary directory. */
export function openSqliteReadModels<S extends SqliteReadModelStore = SqliteReadModelStore>(
  prefix: string,
  options: SqliteReadModelStoreOptions = {},
  open: (file: string, options: SqliteReadModelStoreOptions) => S = (file, o) => new SqliteReadModelStore(file, o) as S,
): SqliteReadModels<S> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const readModels = open(join(dir, 'read-models.sqlite'), options);
  return {
    dir,
    readModels,
    async close() {
      await readModels.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

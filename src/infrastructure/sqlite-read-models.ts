import { join } from 'node:path';
import { ReadModelStore } from '../shared/ports/read-model-store.port';
import { SqliteReadModelStore } from '../adapters/read-models/sqlite/sqlite-read-model-store';
import { apartFor, SplitReadModels } from '../shared/application/projection-runtime/split-read-models';
import { ALL_PROJECTIONS } from '../../projections';
import type { ProjectionDefinition } from '../../projections/projection';

/** The read models' main file in DATA_DIR; projections folded in the background may have files of their own (`background.sqliteFile`). */
export const READ_MODELS_FILE = 'read-models.sqlite';

/** The files of DATA_DIR that hold read models (each with its `-wal` and `-shm`). */
export const readModelFiles = (projections: readonly ProjectionDefinition[] = ALL_PROJECTIONS): string[] => [
  READ_MODELS_FILE,
  ...new Set(projections.flatMap((p) => (p.background?.sqliteFile ? [`${p.background.sqliteFile}.sqlite`] : []))),
];

/**
 * The embedded default's read models: `read-models.sqlite`, and beside it a file for each
 * projection folded in the background that names one (`search.sqlite`), with its own connection
 * and write lock.
 * The same connections on the request thread, the projector thread and the CLIs.
 */
export function openSqliteReadModels(dataDir: string, projections: readonly ProjectionDefinition[] = ALL_PROJECTIONS): ReadModelStore {
  const opened: SqliteReadModelStore[] = [];
  try {
    let store: ReadModelStore = new SqliteReadModelStore(join(dataDir, READ_MODELS_FILE));
    opened.push(store as SqliteReadModelStore);
    const byFile = new Map<string, ProjectionDefinition[]>();
    for (const p of projections) {
      const file = p.background?.sqliteFile;
      if (file) byFile.set(file, [...(byFile.get(file) ?? []), p]);
    }
    for (const [file, definitions] of byFile) {
      const apart = new SqliteReadModelStore(join(dataDir, `${file}.sqlite`));
      opened.push(apart);
      store = new SplitReadModels(store, apartFor(apart, definitions));
    }
    return store;
  } catch (error) {
    for (const store of opened) void store.close();
    throw error;
  }
}

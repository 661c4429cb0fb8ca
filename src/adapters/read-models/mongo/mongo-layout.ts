import { Db, MongoServerError } from 'mongodb';
import { LayoutMigration, LayoutVersionRecord, LayoutVersions, migrateLayout } from '../../shared/layout-versions';

/** Where the layout version is kept: one document in a collection of its own. */
export const LAYOUT_COLLECTION = 'layout';
const LAYOUT_ID = 'parley';
const DUPLICATE_KEY = 11000;

/**
 * The layout of Parley's MongoDB database, one step per version. Steps create what is missing
 * and leave what is there (see LayoutMigration); the adapters create their own collections and
 * indexes as they open.
 */
export const MONGO_LAYOUT_MIGRATIONS: readonly LayoutMigration[] = [
  {
    version: 1,
    description:
      'read models in rm_<collection>_v<version>, checkpoints and leases, blobs in the GridFS bucket `blobs`, rate limits in rate_limit_windows and rate_limit_buckets (the layout before versions were recorded)',
    up: async () => undefined,
  },
];

/** The layout version of one MongoDB database: `{ _id: 'parley', version }` in `layout`. */
export function mongoLayoutRecord(db: Db): LayoutVersionRecord {
  const layout = db.collection<{ _id: string; version: number }>(LAYOUT_COLLECTION);
  return {
    name: `MongoDB database ${db.databaseName} (MONGODB_URI, MONGODB_DATABASE)`,
    read: async () => (await layout.findOne({ _id: LAYOUT_ID }))?.version ?? 0,
    write: async (from, to) => {
      if (from > 0) return (await layout.updateOne({ _id: LAYOUT_ID, version: from }, { $set: { version: to } })).matchedCount === 1;
      try {
        await layout.insertOne({ _id: LAYOUT_ID, version: to });
        return true;
      } catch (error) {
        if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return false;
        throw error;
      }
    },
  };
}

/** Checks, and brings forward, the layout of Parley's MongoDB database: at the start of every process that uses it. */
export function migrateMongoLayout(db: Db, migrations: readonly LayoutMigration[] = MONGO_LAYOUT_MIGRATIONS): Promise<LayoutVersions> {
  return migrateLayout(mongoLayoutRecord(db), migrations);
}

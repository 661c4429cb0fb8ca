import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EsdbEventStore } from '../adapters/event-store/esdb/esdb-event-store';
import { SqliteEventStore } from '../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../adapters/read-models/sqlite/sqlite-read-model-store';
import { refuseForeignCheckpoints } from './runtime';

/**
 * Read models kept in MongoDB while the log moves from SQLite to EventStoreDB hold SQLite
 * checkpoints: a start that folds refuses them with what to do, instead of a projector that
 * fails on every resubscription, and the other way round. The EventStoreDB store needs no
 * server to tell its positions.
 */
describe('a start on read models folded from another event log', () => {
  let dir: string;
  let readModels: SqliteReadModelStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-foreign-'));
    readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
  });
  afterEach(async () => {
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is refused, naming the checkpoint and the rebuild, when the log is EventStoreDB and the checkpoints SQLite's", async () => {
    await readModels.applyBatch([], { users_v1: '00000000000000000042' });
    const events = new EsdbEventStore('esdb://127.0.0.1:1?tls=false');
    try {
      await expect(refuseForeignCheckpoints({ events, readModels, description: 'event log: EventStoreDB' }, ['rooms_v1', 'users_v1'])).rejects.toThrow(
        /^the read models' checkpoint of users_v1 \(00000000000000000042\) is not a position of this event log \(event log: EventStoreDB\): they were folded from another event log\. Rebuild them from this one \(.*npm run rebuild\)/,
      );
      // Its own positions, or none yet, start.
      await readModels.applyBatch([], { users_v1: '00000000000000000050:00000000000000000050' });
      await refuseForeignCheckpoints({ events, readModels, description: 'event log: EventStoreDB' }, ['rooms_v1', 'users_v1']);
    } finally {
      await events.close();
    }
  });

  it("is refused on a SQLite log holding EventStoreDB's checkpoints; its own start", async () => {
    await readModels.applyBatch([], { users_v1: '00000000000000000050:00000000000000000050' });
    const events = new SqliteEventStore(join(dir, 'events.sqlite'));
    try {
      await expect(refuseForeignCheckpoints({ events, readModels, description: 'event log: SQLite' }, ['users_v1'])).rejects.toThrow(
        /^the read models' checkpoint of users_v1 \(00000000000000000050:00000000000000000050\) is not a position of this event log \(event log: SQLite\)/,
      );
      // Its own positions, or none yet, start.
      await readModels.applyBatch([], { rooms_v1: '00000000000000000042' });
      await refuseForeignCheckpoints({ events, readModels, description: 'event log: SQLite' }, ['rooms_v1', 'messages_v1']);
    } finally {
      await events.close();
    }
  });
});

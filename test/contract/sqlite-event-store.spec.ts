import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { eventStoreContract } from './event-store.contract';

eventStoreContract(
  'SqliteEventStore',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-es-contract-'));
    const store = new SqliteEventStore(join(dir, 'events.db'), { synchronous: 'NORMAL', pollMs: 200 });
    return { store, cleanup: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
  },
  { emptyLogPerStore: true },
);

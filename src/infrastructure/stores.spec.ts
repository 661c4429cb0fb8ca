import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/config';
import { EventStoreDBClient } from '@eventstore/db-client';
import { startFakeEventStoreDb } from '../../test/support/fake-eventstoredb';
import { esdbLayoutRecord, ESDB_LAYOUT_MIGRATIONS } from '../adapters/event-store/esdb/esdb-layout';
import { EsdbUnsupportedServerError } from '../adapters/shared/esdb-client';
import { openStores } from './stores';

/** Files this process holds open under `dir` (Linux). */
const openUnder = (dir: string): string[] =>
  readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const target = readlinkSync(join('/proc/self/fd', fd));
      return target.startsWith(dir) ? [target] : [];
    } catch {
      return []; // closed since listed
    }
  });

describe('openStores', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-stores-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('with EventStoreDB, the event log and the ephemeral bus write through one client of the process', async () => {
    const fake = await startFakeEventStoreDb();
    const stores = await openStores(loadConfig({ EVENTSTORE_CONNECTION_STRING: fake.connectionString, DATA_DIR: dataDir }));
    try {
      await stores.events.append('room-acme.r1', [{ type: 'RoomCreated', data: {}, metadata: { occurred_at: '2026-01-01T00:00:00.000Z' } }], 'no_stream');
      await stores.ephemeral.publish('typing:acme:r1', { user_id: 'alice' });
      // The layout version recorded at start, the event, the signal stream's max age, the signal: all from one client.
      expect(fake.appends.map((a) => a.streamName)).toEqual(['$$parley-layout', 'room-acme.r1', expect.stringMatching(/^\$\$ephemeral-/), expect.stringMatching(/^ephemeral-/)]);
      expect(new Set(fake.appends.map((a) => a.connectionName)).size).toBe(1);
    } finally {
      await stores.ephemeral.close();
      await stores.events.close();
      await stores.readModels.close();
      await stores.blobs.close();
      await stores.rateCounters.close();
      await fake.close();
    }
  });

  it('refuses EventStoreDB streams of a newer layout at start, naming it and both versions, and writes nothing', async () => {
    const fake = await startFakeEventStoreDb();
    const newer = EventStoreDBClient.connectionString(fake.connectionString);
    try {
      expect(await esdbLayoutRecord(newer).write(0, ESDB_LAYOUT_MIGRATIONS.length + 1)).toBe(true);
      await expect(openStores(loadConfig({ EVENTSTORE_CONNECTION_STRING: fake.connectionString, DATA_DIR: dataDir }))).rejects.toThrow(
        `EventStoreDB streams (EVENTSTORE_CONNECTION_STRING) has layout version ${ESDB_LAYOUT_MIGRATIONS.length + 1}, newer than this Parley knows (up to version ${ESDB_LAYOUT_MIGRATIONS.length})`,
      );
      expect(fake.appends).toHaveLength(1); // the newer release's record only
      expect(openUnder(dataDir)).toEqual([]);
    } finally {
      await newer.dispose();
      await fake.close();
    }
  });

  it('refuses an EventStoreDB older than 22.6 before opening anything', async () => {
    const fake = await startFakeEventStoreDb({ version: '21.10.2.0' });
    try {
      await expect(openStores(loadConfig({ EVENTSTORE_CONNECTION_STRING: fake.connectionString, DATA_DIR: dataDir }))).rejects.toBeInstanceOf(EsdbUnsupportedServerError);
      expect(fake.appends).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('a store that fails to open closes those opened before it: nothing is left holding files', async () => {
    mkdirSync(join(dataDir, 'read-models.sqlite')); // a directory where the read models' file goes
    // better-sqlite3's error class may come from another test file's realm: matched by its message.
    const failure = await openStores(loadConfig({ DATA_DIR: dataDir })).then(() => null, (error: unknown) => error);
    expect(String((failure as Error | null)?.message)).toMatch(/unable to open database file/);
    expect(openUnder(dataDir)).toEqual([]);
  });
});

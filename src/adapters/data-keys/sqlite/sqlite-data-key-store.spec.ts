import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../../../../test/support/byte-scan';
import { NewerVersionError } from '../../shared/stored-versions';
import { DATA_KEY_MIGRATIONS, KEYS_PER_TRANSACTION, SqliteDataKeyStore } from './sqlite-data-key-store';

describe('SqliteDataKeyStore', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-keys-'));
    file = join(dir, 'keys.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves no byte of a destroyed key in keys.sqlite or its WAL, while open and after closing, and keeps the others', async () => {
    const store = new SqliteDataKeyStore(file);
    const doomed = Array.from({ length: 50 }, (_, i) => ({ id: `acme/message/r/${i}/0`, owner: 'alice@t', wrapped: `DOOMED-${randomBytes(24).toString('hex')}` }));
    const kept = { id: 'acme/message/r/1000/0', owner: 'bob@t', wrapped: `KEPT-${randomBytes(24).toString('hex')}` };
    await store.create([...doomed, kept]);
    expect(scanForMarkers({ folders: [dir] }, [kept.wrapped, doomed[0].wrapped])).toHaveLength(2);

    expect(await store.destroy({ owner: 'alice@t' })).toBe(50);
    expect(scanForMarkers({ folders: [dir] }, doomed.map((k) => k.wrapped))).toEqual([]);
    expect(scanForMarkers({ folders: [dir] }, [kept.wrapped])).not.toEqual([]);
    await store.close();
    expect(scanForMarkers({ folders: [dir] }, doomed.map((k) => k.wrapped))).toEqual([]);
    const reopened = new SqliteDataKeyStore(file);
    expect(await reopened.getMany([kept.id, doomed[0].id])).toEqual(new Map([[kept.id, kept.wrapped]]));
    await reopened.close();
  });

  it('without a WAL truncation per destroy (an offline pass of many), leaves no byte of the destroyed keys once compacted', async () => {
    const store = new SqliteDataKeyStore(file, { emptyWalAfterEachDestroy: false });
    const doomed = Array.from({ length: 20 }, (_, i) => ({ id: `acme/message/${i}/0`, owner: null, wrapped: `DOOMED-${randomBytes(24).toString('hex')}` }));
    const kept = { id: 'acme/message/1000/0', owner: null, wrapped: `KEPT-${randomBytes(24).toString('hex')}` };
    await store.create([...doomed, kept]);
    for (const key of doomed) expect(await store.destroy({ ids: [key.id] })).toBe(1);
    await store.compact();
    expect(scanForMarkers({ folders: [dir] }, doomed.map((k) => k.wrapped))).toEqual([]);
    expect(await store.getMany([kept.id, doomed[0].id])).toEqual(new Map([[kept.id, kept.wrapped]]));
    await store.close();
    expect(scanForMarkers({ folders: [dir] }, doomed.map((k) => k.wrapped))).toEqual([]);
  });

  it('writes a large create a few hundred keys per turn of the event loop, and answers it once all are durable', async () => {
    const store = new SqliteDataKeyStore(file);
    const many = Array.from({ length: 5 * KEYS_PER_TRANSACTION }, (_, i) => ({ id: `acme/message/${i}/0`, owner: null, wrapped: `w${i}` }));
    const reader = new Database(file, { readonly: true });
    const count = () => (reader.prepare('SELECT count(*) AS n FROM data_keys').get() as { n: number }).n;
    const seen: number[] = [];
    let answered = false;
    const created = store.create(many).then((stored) => {
      answered = true;
      return stored;
    });
    // What another connection sees between turns while the create is under way.
    while (!answered) {
      seen.push(count());
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(seen.some((n) => n > 0 && n < many.length)).toBe(true);
    expect((await created).size).toBe(many.length);
    expect(count()).toBe(many.length);
    reader.close();
    await store.close();
  });

  it('finishes a create under way before it closes', async () => {
    const store = new SqliteDataKeyStore(file);
    const many = Array.from({ length: 3 * KEYS_PER_TRANSACTION }, (_, i) => ({ id: `acme/message/${i}/0`, owner: null, wrapped: `w${i}` }));
    const created = store.create(many);
    await new Promise((resolve) => setImmediate(resolve));
    await store.close();
    expect((await created).size).toBe(many.length);
    const reopened = new SqliteDataKeyStore(file);
    expect((await reopened.getMany(many.map((k) => k.id))).size).toBe(many.length);
    await reopened.close();
  });

  it('is readable by its owner only', async () => {
    const store = new SqliteDataKeyStore(file);
    await store.create([{ id: 'acme/room/r/t', owner: null, wrapped: 'w' }]);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    await store.close();
  });

  it('records its schema version, and refuses a file of a newer one naming the file', async () => {
    await new SqliteDataKeyStore(file).close();
    const db = new Database(file);
    expect(db.pragma('user_version', { simple: true })).toBe(DATA_KEY_MIGRATIONS.length);
    db.pragma(`user_version = ${DATA_KEY_MIGRATIONS.length + 1}`);
    db.close();
    expect(() => new SqliteDataKeyStore(file)).toThrow(NewerVersionError);
    expect(() => new SqliteDataKeyStore(file)).toThrow(file);
  });
});

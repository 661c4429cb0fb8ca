import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { PERSONAL_DATA_RULES } from '../../../app/personal-data-rules';
import { DataKeyRing } from '../../crypto/data-key-ring';
import { SecretBox } from '../../crypto/secret-box';
import { openFields, SealedFields } from '../../crypto/sealed-fields';
import { AnyPersonalDataRule, dataKeyIds, ShredHistory } from '../../domain/personal-data';
import { PlaintextSealer, StoredEvent } from './plaintext-sealer';
import { SealingEventStore } from './sealing-event-store';
import { openSqliteStores } from '../../../../test/support/sqlite-stores';

const box = SecretBox.fromBase64(Buffer.alloc(32, 5).toString('base64'));
const TIMELINE = 'messages-acme.r1';
const sent = (id: number, text: string, recordedAt = '2026-01-01T00:00:00.000Z'): StoredEvent => ({
  streamName: TIMELINE,
  type: 'MessageSent',
  data: { id, user_id: 'alice', user_created_at: 'u1', parts: [{ type: 'text/plain', content: text }], room_created_at: 'r', created_at: 'c' },
  recordedAt,
});

/** A log with nothing in it, for rules that never read one. */
const noHistory: ShredHistory = { readStream: async () => [] };

/**
 * A rule whose later events name the incarnation they belong to and whose earlier ones do not
 * (as user and room updates): `keyOfWritten` finds it in the stream's creation.
 */
const incarnationKey = (stream: string, createdAt: string) => ({ id: `acme/${stream}@${createdAt}/profile`, owner: null });
const profileChanged: AnyPersonalDataRule = {
  type: 'ProfileChanged',
  fields: ['name'],
  erased: {},
  keyOf: (event: never, stream: string) => {
    const createdAt = (event as { data: { created_at?: string } }).data.created_at;
    return createdAt ? incarnationKey(stream, createdAt) : null;
  },
  async keyOfWritten(_event: never, stream: string, history: ShredHistory) {
    const [created] = await history.readStream(stream, { fromRevision: 0, maxCount: 1 });
    return created ? incarnationKey(stream, (created.data as { created_at: string }).created_at) : null;
  },
};

describe('PlaintextSealer', () => {
  let dir: string;
  let keys: SqliteDataKeyStore;
  let ring: DataKeyRing;
  let sealer: PlaintextSealer;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-plaintext-sealer-'));
    keys = new SqliteDataKeyStore(join(dir, 'keys.sqlite'));
    ring = new DataKeyRing(keys, box);
    sealer = new PlaintextSealer(ring, PERSONAL_DATA_RULES.sealing);
  });
  afterEach(async () => {
    await keys.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('seals what a rule covers into the form an append writes, which every reader opens back to the original', async () => {
    const page = [sent(1, 'hello'), { streamName: 'room-acme.r1', type: 'RoomCreated', data: { id: 'r1' }, recordedAt: '2026-01-01T00:00:00.000Z' }];
    const sealed = await sealer.seal(page, noHistory);
    expect([...sealed.keys()]).toEqual([0]);
    const data = sealed.get(0)!;
    expect(data).not.toHaveProperty('parts');
    expect(data.sealed).toMatchObject({ k: dataKeyIds.messageVersion('acme', 1, 0) });
    expect(JSON.stringify(data)).not.toContain('hello');

    // Stored as the log holds it, then read as every reader does.
    const stores = openSqliteStores('parley-plaintext-sealer-log-');
    try {
      await stores.events.append(TIMELINE, [{ type: 'MessageSent', data, metadata: { occurred_at: page[0].recordedAt } }], 'any');
      const reader = new SealingEventStore(stores.events, ring, PERSONAL_DATA_RULES);
      expect((await reader.readStream(TIMELINE))[0].data).toEqual(page[0].data);
    } finally {
      await stores.close();
    }
  });

  it('leaves what is sealed already', async () => {
    const [data] = (await sealer.seal([sent(1, 'hello')], noHistory)).values();
    expect((await sealer.seal([{ ...sent(1, 'x'), data }], noHistory)).size).toBe(0);
  });

  it('uses a key that exists already as stored', async () => {
    const id = dataKeyIds.messageVersion('acme', 7, 0);
    const existing = (await ring.keysFor([{ id, owner: null }])).get(id)!;
    const [data] = (await sealer.seal([sent(7, 'again')], noHistory)).values();
    expect(openFields(data.sealed as SealedFields, existing)).toBe(JSON.stringify({ parts: [{ type: 'text/plain', content: 'again' }] }));
  });

  it('places an event its rule cannot place from the event alone through the log as stored (keyOfWritten)', async () => {
    const profiles = new PlaintextSealer(ring, [profileChanged]);
    const history: ShredHistory = { readStream: async (stream) => (stream === 'profile-acme.bo' ? [{ type: 'ProfileCreated', data: { created_at: 't1' } }] : []) };
    const old = { streamName: 'profile-acme.bo', type: 'ProfileChanged', data: { name: 'Bo Old' }, recordedAt: '2026-01-01T00:00:00.000Z' };
    const unplaced = { ...old, streamName: 'profile-acme.nobody' };
    const sealed = await profiles.seal([old, unplaced], history);
    expect([...sealed.keys()]).toEqual([0]);
    expect(sealed.get(0)!.sealed).toMatchObject({ k: 'acme/profile-acme.bo@t1/profile' });
    expect(JSON.stringify(sealed.get(0))).not.toContain('Bo Old');
  });

  it('dates a new key at the event it seals, so that the log\'s deletes reach it as they would have then', async () => {
    const recordedAt = '2020-05-05T05:05:05.005Z';
    await sealer.seal([sent(3, 'old', recordedAt)], noHistory);
    const id = dataKeyIds.messageVersion('acme', 3, 0);
    expect(await keys.destroy({ ids: [id], createdUpTo: Date.parse(recordedAt) - 1 })).toBe(0);
    expect(await keys.destroy({ ids: [id], createdUpTo: Date.parse(recordedAt) })).toBe(1);
  });
});

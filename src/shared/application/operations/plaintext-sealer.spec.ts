import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { PERSONAL_DATA_RULES } from '../../../app/personal-data-rules';
import { DataKeyRing } from '../../crypto/data-key-ring';
import { SecretBox } from '../../crypto/secret-box';
import { openFields, SealedFields } from '../../crypto/sealed-fields';
import { dataKeyIds } from '../../domain/personal-data';
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
    const sealed = await sealer.seal(page);
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
    const [data] = (await sealer.seal([sent(1, 'hello')])).values();
    expect((await sealer.seal([{ ...sent(1, 'x'), data }])).size).toBe(0);
  });

  it('uses a key that exists already as stored', async () => {
    const id = dataKeyIds.messageVersion('acme', 7, 0);
    const existing = (await ring.keysFor([{ id, owner: null }])).get(id)!;
    const [data] = (await sealer.seal([sent(7, 'again')])).values();
    expect(openFields(data.sealed as SealedFields, existing)).toBe(JSON.stringify({ parts: [{ type: 'text/plain', content: 'again' }] }));
  });

  it('dates a new key at the event it seals, so that the log\'s deletes reach it as they would have then', async () => {
    const recordedAt = '2020-05-05T05:05:05.005Z';
    await sealer.seal([sent(3, 'old', recordedAt)]);
    const id = dataKeyIds.messageVersion('acme', 3, 0);
    expect(await keys.destroy({ ids: [id], createdUpTo: Date.parse(recordedAt) - 1 })).toBe(0);
    expect(await keys.destroy({ ids: [id], createdUpTo: Date.parse(recordedAt) })).toBe(1);
  });
});

import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { PERSONAL_DATA_RULES } from '../../../app/personal-data-rules';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { DataKeyRing } from '../../crypto/data-key-ring';
import { SecretBox } from '../../crypto/secret-box';
import { RecordedEvent } from '../../domain/event';
import { EventToAppend } from '../../ports/event-store.port';
import { SealingEventStore } from './sealing-event-store';
import { SHRED_SWEEP_CHECKPOINT, ShredSweep } from './shred-sweep';

const box = SecretBox.fromBase64(Buffer.alloc(32, 3).toString('base64'));
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const sent = (id: number, text: string): EventToAppend => ({
  type: 'MessageSent',
  data: { id, user_id: 'alice', parts: [{ type: 'text/plain', content: text }], room_created_at: 'r', created_at: 'c' },
  metadata: meta,
});
const deleted = (id: number): EventToAppend => ({ type: 'MessageDeleted', data: { id, room_id: 'r1', tombstone: false, deleted_at: 'd' }, metadata: meta });
const TIMELINE = 'messages-acme.r1';
const view = (event: RecordedEvent) => event.data as { id: number; parts: { content: string }[]; erased?: boolean };

describe('ShredSweep', () => {
  let stores: SqliteStores;
  let keys: SqliteDataKeyStore;
  let log: SealingEventStore;
  let sweep: ShredSweep;
  beforeEach(() => {
    stores = openSqliteStores('parley-shred-sweep-');
    keys = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    log = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
    sweep = new ShredSweep(log, stores.readModels);
  });
  afterEach(async () => {
    await keys.close();
    await stores.close();
  });

  it('destroys what a delete in the log destroys when the process that appended it died before destroying it', async () => {
    await log.append(TIMELINE, [sent(1, 'gone'), sent(2, 'kept')], 'any');
    // What a kill -9 between the delete's append and its destroy leaves: the delete, the key still there.
    await stores.events.append('message-acme.1', [deleted(1)], 'any');
    expect(view((await log.readStream(TIMELINE))[0]).parts[0].content).toBe('gone');

    expect(await sweep.pass()).toBe(1);
    const [first, second] = await new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES).readStream(TIMELINE);
    expect(view(first)).toMatchObject({ id: 1, parts: [], erased: true });
    expect(view(second).parts[0].content).toBe('kept');
    expect(await stores.readModels.getCheckpoint(SHRED_SWEEP_CHECKPOINT)).toBe((await stores.events.headPosition())!);
    expect(await sweep.pass()).toBe(0);
  });

  it('never reaches a key created after the delete it replays (the same ids used again later)', async () => {
    await log.append(TIMELINE, [sent(1, 'old')], 'any');
    await log.append('message-acme.1', [deleted(1)], 'any');
    // The clock moves past the delete's record before the ids are used again.
    const recorded = Date.parse((await stores.events.readStream('message-acme.1'))[0].recordedAt);
    while (Date.now() <= recorded + 1) await new Promise((resolve) => setImmediate(resolve));
    await log.append('messages-acme.r1', [sent(1, 'new')], 'any');

    await sweep.pass();
    const events = await log.readStream(TIMELINE);
    expect(view(events[events.length - 1]).parts[0].content).toBe('new');
  });

  it("destroys delivered Beams publishes' notifications, which their delivery only records, a page of them in one write", async () => {
    const publish = (id: string): EventToAppend => ({
      type: 'BeamsPublishAccepted',
      data: { publish_id: id, target: { interests: ['news'] }, request: { web: { notification: { title: `title of ${id}` } } }, webhook_url: null, accepted_at: 'a' },
      metadata: meta,
    });
    const delivered: EventToAppend = { type: 'BeamsPublishDelivered', data: { devices: 1, delivered: 1, failed: 0, removed: 0, delivered_at: 'd' }, metadata: meta };
    const stream = (id: string) => `beamspublish-acme.${id}`;
    const titleOf = async (id: string) => (((await log.readStream(stream(id)))[0].data as { request: { web?: { notification: { title: string } } } }).request.web?.notification.title ?? null);
    for (const id of ['p1', 'p2', 'p3']) await log.append(stream(id), [publish(id)], 'any');
    await sweep.pass();
    const destroys = jest.spyOn(keys, 'destroy');
    await log.append(stream('p1'), [delivered], 'any');
    await log.append(stream('p2'), [delivered], 'any');
    // Recorded, not yet destroyed: the delivery's append wrote nothing to the key store.
    expect(destroys).not.toHaveBeenCalled();
    expect(await titleOf('p1')).toBe('title of p1');

    expect(await sweep.pass()).toBe(2);
    expect(destroys).toHaveBeenCalledTimes(1);
    expect(destroys).toHaveBeenCalledWith(expect.objectContaining({ ids: ['acme/beams-publish/p1', 'acme/beams-publish/p2'] }));
    // Read by a process that never had the keys in memory: gone from the store, not only forgotten.
    const reader = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
    const opened = async (id: string) => (await reader.readStream(stream(id)))[0].data as { request: unknown; erased?: boolean };
    expect(await opened('p1')).toMatchObject({ request: {}, erased: true });
    expect(await opened('p2')).toMatchObject({ request: {}, erased: true });
    expect(await titleOf('p3')).toBe('title of p3');
  });

  it('moves its checkpoint to the head when the log holds no delete, so the next pass reads from there', async () => {
    await log.append(TIMELINE, [sent(1, 'a')], 'any');
    expect(await sweep.pass()).toBe(0);
    expect(await stores.readModels.getCheckpoint(SHRED_SWEEP_CHECKPOINT)).toBe((await stores.events.headPosition())!);
  });
});

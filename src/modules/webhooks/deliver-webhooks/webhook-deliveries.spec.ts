import { openSqliteReadModels, SqliteReadModels } from '../../../../test/support/sqlite-stores';
import { CheckpointWriter } from './checkpoint-writer';
import { DELIVERY_LOG_ENTRIES, pruneDeliveries, WEBHOOK_DELIVERIES, WEBHOOK_DELIVERIES_COLLECTION, WebhookDeliveryDocument } from './webhook-deliveries';

const position = (n: number) => String(n).padStart(20, '0');
const entry = (webhookId: string, n: number): WebhookDeliveryDocument => ({
  _id: `${webhookId}-${n}`,
  instance_id: 'acme',
  webhook_id: webhookId,
  event_id: `e${n}`,
  event_type: 'v1.messages_created',
  position: position(n),
  after_position: n === 1 ? null : position(n - 1),
  status: 'delivered',
  attempts: 1,
  response_code: 200,
  delivered_at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
});

describe('the delivery log and the checkpoint of a webhook (real SQLite read models)', () => {
  let stores: SqliteReadModels;
  beforeEach(async () => {
    stores = openSqliteReadModels('parley-webhook-deliveries-');
    await stores.readModels.ensureCollections([WEBHOOK_DELIVERIES_COLLECTION]);
  });
  afterEach(() => stores.close());

  it('writes delivered events with the checkpoint, a group at a time, fenced by the lease', async () => {
    const { readModels } = stores;
    expect(await readModels.acquireLease('webhook:acme/w1', 'me', 60_000)).toBe(true);
    const writer = new CheckpointWriter(readModels, 'webhook:acme/w1#0', { name: 'webhook:acme/w1', owner: 'me' }, () => undefined);
    writer.passed(position(1), [entry('w1', 1)]);
    writer.passed(position(2), []);
    writer.passed(position(3), [entry('w1', 3)]);
    expect(await readModels.getCheckpoint('webhook:acme/w1#0')).toBeNull(); // a group waits for its write
    await writer.flush();
    expect(await readModels.getCheckpoint('webhook:acme/w1#0')).toBe(position(3));
    expect((await readModels.find(WEBHOOK_DELIVERIES)).map((d) => d._id)).toEqual(['w1-1', 'w1-3']);

    // Another process took the lease: nothing more is written, and the writer says so.
    await readModels.releaseLease('webhook:acme/w1', 'me');
    expect(await readModels.acquireLease('webhook:acme/w1', 'other', 60_000)).toBe(true);
    const failures: unknown[] = [];
    const fenced = new CheckpointWriter(readModels, 'webhook:acme/w1#0', { name: 'webhook:acme/w1', owner: 'me' }, (e) => failures.push(e));
    fenced.passed(position(4), [entry('w1', 4)]);
    await expect(fenced.flush()).rejects.toThrow(/lease/);
    expect(fenced.failed).not.toBeNull();
    expect(failures).toHaveLength(1);
    expect(await readModels.getCheckpoint('webhook:acme/w1#0')).toBe(position(3));
    expect(await readModels.count(WEBHOOK_DELIVERIES)).toBe(2);
  });

  it("keeps a webhook's newest entries only, and removes all of a deleted webhook's, leaving other webhooks' alone", async () => {
    const { readModels } = stores;
    const many = Array.from({ length: DELIVERY_LOG_ENTRIES + 30 }, (_, i) => entry('w1', i + 1));
    await readModels.applyBatch([...many, entry('w2', 1)].map((document) => ({ collection: WEBHOOK_DELIVERIES, kind: 'put' as const, document, position: document.position })), {});
    await pruneDeliveries(readModels, 'acme', 'w1');
    const kept = await readModels.find<WebhookDeliveryDocument>(WEBHOOK_DELIVERIES, { where: { webhook_id: 'w1' }, sort: [{ field: 'delivered_at' }] });
    expect(kept).toHaveLength(DELIVERY_LOG_ENTRIES);
    expect(kept[0]._id).toBe('w1-31');
    await pruneDeliveries(readModels, 'acme', 'w1', 0);
    expect(await readModels.count(WEBHOOK_DELIVERIES, { webhook_id: 'w1' })).toBe(0);
    expect(await readModels.count(WEBHOOK_DELIVERIES, { webhook_id: 'w2' })).toBe(1);
  });
});

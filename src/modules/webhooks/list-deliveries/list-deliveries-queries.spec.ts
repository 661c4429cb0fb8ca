import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { notingQueries, sqlitePlans } from '../../../../test/support/sqlite-query-plans';
import { WEBHOOK_DELIVERIES, WEBHOOK_DELIVERIES_COLLECTION } from '../deliver-webhooks/webhook-deliveries';
import { Webhooks } from '../webhooks';
import { ListDeliveriesController } from './list-deliveries';

/** A webhook's delivery log, paged newest first: each read is a range of its index (SQLite query plans). */
describe('webhook delivery log pages (SQLite query plans)', () => {
  let dir: string;
  let readModels: SqliteReadModelStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-deliveries-queries-'));
    readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    await readModels.ensureCollections([WEBHOOK_DELIVERIES_COLLECTION]);
    await readModels.applyBatch(
      ['01', '02', '02', '03'].map((second, n) => ({
        collection: WEBHOOK_DELIVERIES,
        kind: 'put' as const,
        position: '00000000000000000001',
        document: { _id: `d${n}`, instance_id: 'i', webhook_id: 'w', event_id: `e${n}`, event_type: 't', position: String(n), after_position: null, status: 'delivered', attempts: 1, response_code: 200, delivered_at: `2026-01-01T00:00:${second}.000Z` },
      })),
      {},
    );
  });
  afterAll(async () => {
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the newest page, then the deliveries before one (of the same moment first), through the index', async () => {
    const { store, queries } = notingQueries(readModels);
    // The webhook's existence is read from the log, not a read model: only the delivery log's reads are looked at here.
    const existing = { get: async () => ({}) } as unknown as Webhooks;
    const deliveries = new ListDeliveriesController(existing, store);
    expect((await deliveries.list('i', 'w', { limit: '2' })).map((d) => d.id)).toEqual(['d3', 'd2']);
    expect((await deliveries.list('i', 'w', { before: 'd2' })).map((d) => d.id)).toEqual(['d1', 'd0']);
    const plans = sqlitePlans(join(dir, 'read-models.sqlite'), queries);
    expect(plans).toHaveLength(3);
    for (const plan of plans) expect(plan).toMatch(/^SEARCH rm_webhook_deliveries USING (COVERING )?INDEX ix_/);
    for (const plan of plans) expect(plan).not.toMatch(/TEMP B-TREE|SCAN/);
  });
});

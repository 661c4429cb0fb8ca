import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../adapters/event-store/sqlite/sqlite-event-store';
import { openSqliteReadModels, READ_MODELS_FILE } from '../infrastructure/sqlite-read-models';
import { SqliteReadModelStore } from '../adapters/read-models/sqlite/sqlite-read-model-store';
import { createLogger } from '../infrastructure/logger';
import { ReadModelStore } from '../shared/ports/read-model-store.port';
import { ALL_PROJECTIONS } from '../../projections';
import { checkpointName, physicalCollection } from '../../projections/projection';
import { actorKey, AUDIT_INDEX, auditIndexProjection } from '../../projections/audit/audit-index.projection';
import { messageSearchProjection } from '../../projections/search/message-search.projection';
import { CountingStore } from '../../test/support/counting-event-store';
import { eventually } from '../../test/support/waiting';
import { openProjectors } from './projectors';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

/**
 * A process's projectors as the embedded server opens them (the serving runner and the
 * background one: message search, into search.sqlite, and the audit index), over real SQLite files.
 */
describe('openProjectors', () => {
  let dir: string;
  let events: SqliteEventStore;
  let readModels: ReadModelStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-projectors-'));
    events = new SqliteEventStore(join(dir, 'events.sqlite'));
    readModels = openSqliteReadModels(dir);
  });
  afterEach(async () => {
    await events.close();
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const append = (n: number) => events.append('tick-acme.t', Array.from({ length: n }, () => ({ type: 'Tick', data: {}, metadata: meta })), 'any');

  it("has message search's runner take the serving runner's live events: each event is read from the log once", async () => {
    await append(3);
    const log = new CountingStore(events);
    const projectors = await openProjectors(log.events, readModels, {
      config: { projectionLeaseTtlMs: 15_000, projectorPartitions: 1 },
      owner: undefined,
      logger: createLogger('silent'),
      projections: ALL_PROJECTIONS,
      recordBatch: () => undefined,
    });
    try {
      await projectors.start();
      const search = checkpointName(messageSearchProjection);
      const served = checkpointName(ALL_PROJECTIONS.find((p) => !p.background)!);
      expect(projectors.holds(search)).toBe(true);
      log.reset();

      await append(5);
      const head = (await events.headPosition())!;
      // Searches hurry it: its batch is written without waiting out its second of gathering.
      await eventually(
        () => {
          projectors.hurry?.([search]);
          return projectors.positionOf(search) === head && projectors.positionOf(served) === head;
        },
        { what: 'both runners folded the new events' },
      );
      // The serving runner's subscription read them; search's runner read nothing of the log itself.
      expect(log.everyEventRead).toBe(5);
    } finally {
      await projectors.stop();
    }
  });

  it('folds the audit index in the background, where an earlier release left it: its lines and checkpoint in read-models.sqlite', async () => {
    const projectors = await openProjectors(events, readModels, {
      config: { projectionLeaseTtlMs: 15_000, projectorPartitions: 1 },
      owner: undefined,
      logger: createLogger('silent'),
      projections: ALL_PROJECTIONS,
      recordBatch: () => undefined,
    });
    const audit = checkpointName(auditIndexProjection);
    const main = new SqliteReadModelStore(join(dir, READ_MODELS_FILE));
    try {
      await projectors.start();
      // Only the audit index folds a read of messages' content: no other read model changes.
      await events.append('contentread-acme.lobby', [{ type: 'MessageContentRead', data: { room_id: 'lobby', message_count: 2, first_message_id: 1, last_message_id: 2, read_at: meta.occurred_at }, metadata: { ...meta, actor: { user_id: 'mod' } } }], 'any');
      const head = (await events.headPosition())!;
      // An audit route waits so, hurrying the runner that gathers its batch.
      await eventually(
        () => {
          projectors.hurry?.([audit]);
          return projectors.positionOf(audit) === head;
        },
        { what: 'the audit index folded the read' },
      );
      const lines = await main.find(physicalCollection(AUDIT_INDEX, auditIndexProjection.version), { where: { key: actorKey.user('mod') } });
      expect(lines.map((line) => [line.stream, line.type])).toEqual([['contentread-acme.lobby', 'MessageContentRead']]);
      expect(await main.getCheckpoint(audit)).toBe(head);
    } finally {
      await projectors.stop();
      await main.close();
    }
  });
});

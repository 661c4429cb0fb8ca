import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../adapters/event-store/sqlite/sqlite-event-store';
import { openSqliteReadModels } from '../infrastructure/sqlite-read-models';
import { createLogger } from '../infrastructure/logger';
import { ReadModelStore } from '../shared/ports/read-model-store.port';
import { ALL_PROJECTIONS } from '../../projections';
import { checkpointName } from '../../projections/projection';
import { messageSearchProjection } from '../../projections/search/message-search.projection';
import { CountingStore } from '../../test/support/counting-event-store';
import { eventually } from '../../test/support/waiting';
import { openProjectors } from './projectors';

const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

/**
 * A process's projectors as the embedded server opens them (the serving runner and message
 * search's, folded in the background into search.sqlite), over real SQLite files.
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
});

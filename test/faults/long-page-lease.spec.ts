import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';
import { ProjectorRunner } from '../../src/shared/application/projection-runtime/projector-runner';
import { checkpointName, physicalCollection, ProjectionDefinition } from '../../projections/projection';
import { usersProjection } from '../../projections/users/users.projection';
import { eventually, FaultLab, processEnv } from './process-client';
import { slowCount } from '../support/slow-count';

/** The worker's lease time (the least allowed): it tries to take free leases every third of it. */
const WORKER_LEASE_TTL_MS = 1_000;
/** The fold's: it renews every third of it, so a stall of the test process up to two thirds of it is tolerated. */
const LEASE_TTL_MS = 4_000;
const EVENTS = 240;
/** Events per page: 120 folded at 40 ms each take 4.8 s, over a lease time, with nothing else to run meanwhile. */
const PAGE = 120;
const FOLD_MS = 40;
const OWNER = 'long-pages';

/**
 * A page of the log is folded and written synchronously on SQLite: no timer of the process runs
 * until it ends, so a page that outlasts the projections' leases (a 10,000-event page of
 * `npm run rebuild` on a busy machine) must renew them itself. A real projector worker process
 * on the same data directory takes any lease that lapses meanwhile, as a live process would, and
 * would then fold the projection beside the rebuild.
 */
describe('a fold whose pages outlast its leases, beside a live projector worker (real runner on SQLite, real process)', () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('keeps its leases through every page: the worker never takes the projection, and every page is written', async () => {
    const dir = lab.dataDir();
    const env = processEnv(dir, { PROJECTION_LEASE_TTL_MS: String(WORKER_LEASE_TTL_MS) });
    // Under the users projection's name and version, so under the lease a live worker takes for it.
    const standIn: ProjectionDefinition = {
      name: usersProjection.name,
      version: usersProjection.version,
      collections: [{ name: 'ticks' }],
      handles: ['Tick'],
      targets: (event) => [{ collection: 'ticks', id: event.streamName }],
      evolve: slowCount(FOLD_MS),
    };
    const lease = checkpointName(standIn);
    const events = new SqliteEventStore(join(dir, 'events.sqlite'));
    const readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    const errors: unknown[] = [];
    let runner: ProjectorRunner | undefined;
    try {
      await events.append('tick-faults.t', Array.from({ length: EVENTS }, () => ({ type: 'Tick', data: {}, metadata: { occurred_at: '2026-01-01T00:00:00.000Z' } })), 'no_stream');
      // Held until the fold starts, as the rebuild holds it from before the worker could take it.
      expect(await readModels.acquireLease(lease, OWNER, 60_000)).toBe(true);
      const worker = await lab.startWorker(env);
      /** Every set of projections the worker said it holds. */
      const workerHeld = () =>
        worker.output
          .flatMap((line) => {
            try {
              return [JSON.parse(line) as { msg?: string; projections?: string[] }];
            } catch {
              return [];
            }
          })
          .filter((entry) => entry.msg === 'projector holds these projections now' || entry.msg === 'projector worker running')
          .map((entry) => entry.projections ?? []);
      expect(workerHeld().flat()).not.toContain(lease);
      expect(workerHeld().flat().length).toBeGreaterThan(0); // it folds the others: a live contender

      // As the rebuild runs it: alone on what it folds (no seat among the workers), pages of PAGE events.
      runner = new ProjectorRunner(events, readModels, [standIn], {
        owner: OWNER,
        leaseTtlMs: LEASE_TTL_MS,
        shareOut: false,
        catchUpPage: PAGE,
        onError: (error) => errors.push(error),
      });
      await runner.start();
      expect(runner.running).toEqual([lease]);
      await runner.caughtUp();

      expect(errors.map(String)).toEqual([]);
      expect(await readModels.get(physicalCollection('ticks', standIn.version), 'tick-faults.t')).toEqual({ _id: 'tick-faults.t', n: EVENTS });
      expect(await readModels.getCheckpoint(lease)).not.toBeNull();
      expect(workerHeld().flat()).not.toContain(lease);

      // Released, the lease is the worker's within a lease time: it was there to take it all along.
      await runner.stop();
      runner = undefined;
      expect(await eventually(async () => workerHeld().some((held) => held.includes(lease)), 15_000)).toBe(true);
    } finally {
      await runner?.stop();
      await lab.stopAll();
      await events.close();
      await readModels.close();
    }
  }, 60_000);
});

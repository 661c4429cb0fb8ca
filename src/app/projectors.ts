import { randomUUID } from 'node:crypto';
import { ParleyConfig } from '../config/config';
import { EventStore } from '../shared/ports/event-store.port';
import { ReadModelStore } from '../shared/ports/read-model-store.port';
import { ProjectorRunner, ProjectorRunnerOptions } from '../shared/application/projection-runtime/projector-runner';
import { ProcessProjectors } from '../shared/application/projection-runtime/process-projectors';
import { buildingApart } from '../shared/application/projection-runtime/projection-versions';
import { SharedLiveEvents } from '../shared/application/projection-runtime/projector/shared-live-events';
import { checkpointName, ProjectionDefinition } from '../../projections/projection';
import { Logger } from '../infrastructure/logger';

/** Events per page while a new projection version builds in a serving process (the runner's live catch-up size). */
const BUILDING_PAGE = 2_000;

/**
 * How the projections folded in the background (`ProjectionDefinition.background`: message
 * search, the audit index) follow the log: live, a batch gathers the events of up to a second after its first
 * (at most 250), so the index is written in large transactions rather than once per send (an
 * FTS5 insert writes its index pages once per transaction: measured 32 KiB written per message
 * one at a time, 2 KiB a hundred at a time), after the other projections' batches; catching up,
 * pages of 10,000 events. The cap keeps a batch to some 15 ms of the thread (the audit index's
 * lines add about 2 ms of CPU to search's 6 in a batch of 250 sends, measured alone): the other
 * projections, which sends wait for, fold on the same thread, and batches of up to 5,000 (a
 * second of sends under load, about 100 ms) made the sends' p99 latency 120 ms where 250 gave 60–70
 * (`npm run bench`, `cores`). A reader that waits for it (a
 * search, an audit route) ends the gathering (`hurry`), and so does a destroying event (a delete is answered
 * once its words are gone), so neither waits out the second.
 */
const BACKGROUND_FOLD: Partial<ProjectorRunnerOptions> = { liveGatherMs: 1_000, maxBatch: 250, catchUpPage: 10_000 };

export interface ProjectorsSettings {
  readonly config: Pick<ParleyConfig, 'projectionLeaseTtlMs' | 'projectorPartitions'>;
  /** The lease owner (the embedded server's stable one), or undefined for a fresh one per process. */
  readonly owner: string | undefined;
  readonly logger: Logger;
  readonly projections: readonly ProjectionDefinition[];
  /**
   * Each batch written: the process's metrics (recordProjectorBatch), or the projector thread's
   * report to the request thread, which keeps prom-client (and its event-loop timer) out of that thread.
   */
  readonly recordBatch: NonNullable<ProjectorRunnerOptions['recordBatch']>;
}

/**
 * The projectors of a process that folds (the embedded server, on its request thread or its
 * projector thread; a projector worker; the admin CLI): one runner for the versions serving
 * reads, one for the versions building beside them (see `buildingApart`), with the options
 * and log lines every such process uses.
 */
export async function openProjectors(events: EventStore, readModels: ReadModelStore, settings: ProjectorsSettings): Promise<ProcessProjectors> {
  const { config, logger, projections } = settings;
  // One owner for every runner of the process: workers share projections out by the owners
  // seated (projection-leases.ts), so a process running two or three runners must count once.
  const owner = settings.owner ?? `projector-${process.pid}-${randomUUID().slice(0, 8)}`;
  const runnerFor = (definitions: readonly ProjectionDefinition[], options: Partial<ProjectorRunnerOptions> = {}) =>
    new ProjectorRunner(events, readModels, definitions, {
      owner,
      leaseTtlMs: config.projectionLeaseTtlMs,
      partitions: config.projectorPartitions,
      recordBatch: settings.recordBatch,
      onLeasesChanged: (held) => logger.info({ projections: held }, 'projector holds these projections now'),
      onError: (error, { projection, parked, freedSpace }) =>
        freedSpace
          ? logger.warn({ err: error }, "deleted content may stay in the read models' files until the next delete or start")
          : parked
            ? logger.error({ err: error, projection }, 'projection parked: one event keeps failing it; the others go on')
            : projection
              ? logger.error({ err: error, projection }, 'projection failed on an event; it alone tries it again shortly, the others go on')
              : logger.error({ err: error }, 'projector dropped; resubscribing from its checkpoints'),
      ...options,
    });
  const { current, building } = buildingApart(projections, await readModels.getCheckpoints(projections.map(checkpointName)));
  if (building.length) logger.info({ projections: building.map(checkpointName) }, 'new projection versions build beside the serving ones, which serve meanwhile');
  const foreground = current.filter((p) => !p.background);
  const background = current.filter((p) => p.background);
  // The background runner takes the serving runner's live events, read and opened once for both:
  // with a subscription of its own, it read and opened each event again (measured: search's CPU
  // per send halved without that, docs/benchmarks.md).
  const shared = background.length ? new SharedLiveEvents() : null;
  // The building versions fold while the process serves: pages of the live size keep answers prompt.
  return new ProcessProjectors(
    runnerFor(foreground, shared ? { liveEvents: { shared, as: 'reader' } } : {}),
    building.length ? runnerFor(building, { catchUpPage: BUILDING_PAGE }) : null,
    shared ? runnerFor(background, { ...BACKGROUND_FOLD, liveEvents: { shared, as: 'follower' } }) : null,
  );
}

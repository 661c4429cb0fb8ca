import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { PeriodicSweep } from '../../shared/application/operations/periodic-sweep';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { DomainError, messageOf } from '../../shared/domain/errors';
import { Actor, EventMetadata } from '../../shared/domain/event';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import {
  PENDING_DELETE_JOBS,
  PendingDeleteJobDocument,
  pendingDeleteJobsProjection,
} from '../../../projections/jobs/pending-delete-jobs.projection';
import { roomDecider, roomNotFound, roomStream } from '../rooms/domain/room.decider';
import { userDecider, userNotFound, userStream } from '../users/domain/user.decider';
import { deleteJobDecider, DeleteJobState, deleteJobStream, jobNotFound } from './domain/delete-job.decider';
import { DeleteTarget } from './domain/delete-job.events';

/** How often every API process looks for pending jobs (its own, other processes', those a crash left). */
export const JOB_SWEEP_INTERVAL_MS = 2_000;
/** Pending jobs read per query. */
const BATCH = 100;

/**
 * Asynchronous deletes (chatkit_scheduler). A job is its own stream: scheduling appends
 * `DeleteJobScheduled` and answers at once; the process that scheduled it starts it right
 * away, and every API process sweeps the pending jobs' read model, so a job whose process
 * died (or failed on storage) is run again after a restart. Running a job is idempotent:
 * a target already gone counts as deleted, and completing an ended job decides nothing, so
 * two processes (or a crash between the delete and its completion) end it once.
 */
@Injectable()
export class DeleteJobs implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('scheduler');
  private readonly running = new Map<string, Promise<void>>();
  private readonly sweeper = new PeriodicSweep(() => this.sweepAll(), JOB_SWEEP_INTERVAL_MS, (error) =>
    this.logger.warn(`looking for pending delete jobs failed; retrying in ${JOB_SWEEP_INTERVAL_MS} ms: ${messageOf(error)}`),
  );

  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeper.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([this.sweeper.stop(), ...this.running.values()]);
  }

  /** Schedules the delete of a room or user that exists now (404 otherwise); answers the job id once the job is in the log. */
  async schedule(instanceId: string, target: DeleteTarget, targetId: string, requestedBy: Actor): Promise<string> {
    await this.requireTarget(instanceId, target, targetId);
    const jobId = randomUUID();
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      deleteJobStream(instanceId, jobId),
      deleteJobDecider,
      { type: 'ScheduleDelete', target, targetId, requestedBy, now },
      { instance_id: instanceId, actor: requestedBy, occurred_at: now },
      // The status is read from the job's stream: no read model needs to show it first.
      { awaitProjections: [] },
    );
    this.start(instanceId, jobId);
    return jobId;
  }

  /** The job as its stream says now (404 for a job that does not exist, or was wiped with its instance). */
  async status(instanceId: string, jobId: string): Promise<DeleteJobState> {
    const { state } = await this.pipeline.load(deleteJobStream(instanceId, jobId), deleteJobDecider);
    if (state.status === null) throw jobNotFound(jobId);
    return state;
  }

  /** One pass over the pending jobs; a pass already running is joined rather than doubled. */
  sweep(): Promise<void> {
    return this.sweeper.run();
  }

  private async sweepAll(): Promise<void> {
    const pending = await this.readModels.find<PendingDeleteJobDocument>(PENDING_DELETE_JOBS, {
      sort: [{ field: 'scheduled_at' }],
      limit: BATCH,
    });
    for (const job of pending) if (!this.sweeper.stopped) this.start(job.instance_id, job.id);
    await Promise.allSettled(this.running.values());
  }

  /** Runs a job unless this process already runs it; a failure leaves it pending for the next sweep. */
  private start(instanceId: string, jobId: string): void {
    const key = `${instanceId}\u0000${jobId}`;
    if (this.running.has(key) || this.sweeper.stopped) return;
    const run = this.run(instanceId, jobId)
      .catch((error: unknown) => this.logger.warn(`delete job ${jobId} of ${instanceId} stays pending, retried by the next sweep: ${messageOf(error)}`))
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  private async run(instanceId: string, jobId: string): Promise<void> {
    const stream = deleteJobStream(instanceId, jobId);
    const { state } = await this.pipeline.load(stream, deleteJobDecider);
    if (state.status !== 'pending') return;
    const actor: Actor = state.requestedBy ?? { key_id: 'scheduler' };
    const metadata = () => ({ instance_id: instanceId, actor, occurred_at: this.clock.now().toISOString(), job_id: jobId });
    let failure: string | null = null;
    try {
      await this.deleteTarget(instanceId, state.target!, state.targetId!, metadata());
    } catch (error) {
      // Gone already (an earlier run, or someone else): what the job asked for holds.
      if (error instanceof DomainError && error.category === 'not_found') failure = null;
      // Refused for good; anything else (storage, read models late) is retried.
      else if (error instanceof DomainError && error.status < 500) failure = error.description;
      else throw error;
    }
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      stream,
      deleteJobDecider,
      failure === null ? { type: 'CompleteJob', now } : { type: 'FailJob', reason: failure, now },
      metadata(),
      // Answered once the job left the work list, so the next sweep does not run it again.
      { awaitProjections: [checkpointName(pendingDeleteJobsProjection)] },
    );
  }

  /** The same command a synchronous delete runs; answered once every read model shows it (so "completed" means gone from reads). */
  private async deleteTarget(instanceId: string, target: DeleteTarget, targetId: string, metadata: EventMetadata): Promise<void> {
    const now = this.clock.now().toISOString();
    if (target === 'room') await this.pipeline.run(roomStream(instanceId, targetId), roomDecider, { type: 'DeleteRoom', id: targetId, now }, metadata);
    else await this.pipeline.run(userStream(instanceId, targetId), userDecider, { type: 'DeleteUser', id: targetId, now }, metadata);
  }

  private async requireTarget(instanceId: string, target: DeleteTarget, targetId: string): Promise<void> {
    if (target === 'room') {
      if (!(await this.pipeline.load(roomStream(instanceId, targetId), roomDecider)).state.exists) throw roomNotFound(targetId);
    } else if (!(await this.pipeline.load(userStream(instanceId, targetId), userDecider)).state.exists) throw userNotFound(targetId);
  }
}

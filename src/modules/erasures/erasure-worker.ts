import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PeriodicSweep } from '../../shared/application/operations/periodic-sweep';
import { underLease } from '../../shared/application/operations/under-lease';
import { LEASE_OWNER, SERVES_REQUESTS } from '../../shared/application/tokens';
import { messageOf } from '../../shared/domain/errors';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { PENDING_ERASURES, PendingErasureDocument } from '../../../projections/erasures/pending-erasures.projection';
import { UserErasure } from './erase-user/user-erasure';

/** How often a serving process looks for erasures to run or resume (its own, other processes', those a crash left). */
export const ERASURE_SWEEP_INTERVAL_MS = 2_000;
/** How long a process holds an erasure it runs without renewing (renewed every third of it): a dead holder's erasure is resumed after it. */
const ERASURE_LEASE_MS = 30_000;
/** Pending erasures read per pass. */
const BATCH = 100;

/**
 * Runs erasures in the background of every serving process: the one that accepted a request
 * starts it at once, and every serving process sweeps the work list (`pending_erasures`), so
 * an erasure whose process died is resumed from its last checkpoint after a restart. An
 * erasure runs under a lease: two processes never run the same one at once.
 * A CLI runs one only when it asks (`runToEnd`): beside an embedded server, the server does.
 */
@Injectable()
export class ErasureWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('erasures');
  private readonly running = new Map<string, Promise<boolean>>();
  private readonly sweeper = new PeriodicSweep(() => this.sweepAll(), ERASURE_SWEEP_INTERVAL_MS, (error) =>
    this.logger.warn(`looking for pending erasures failed; retrying in ${ERASURE_SWEEP_INTERVAL_MS} ms: ${messageOf(error)}`),
  );

  constructor(
    private readonly erasure: UserErasure,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(LEASE_OWNER) private readonly owner: string,
    @Inject(SERVES_REQUESTS) private readonly servesRequests: boolean,
  ) {}

  onApplicationBootstrap(): void {
    if (this.servesRequests) this.sweeper.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([this.sweeper.stop(), ...this.running.values()]);
  }

  /** Starts an erasure in the background (a serving process); a failure leaves it to the next sweep. */
  start(instanceId: string, erasureId: string): void {
    if (this.servesRequests) void this.runOnce(instanceId, erasureId).catch(() => undefined);
  }

  /**
   * Runs the erasure here until it completed (a CLI); resolves false when another process
   * holds it (its progress is then read from its stream).
   */
  runToEnd(instanceId: string, erasureId: string): Promise<boolean> {
    return this.runOnce(instanceId, erasureId);
  }

  private async sweepAll(): Promise<void> {
    const pending = await this.readModels.find<PendingErasureDocument>(PENDING_ERASURES, { sort: [{ field: 'requested_at' }], limit: BATCH });
    for (const erasure of pending) if (!this.sweeper.stopped) void this.runOnce(erasure.instance_id, erasure.id).catch(() => undefined);
    await Promise.allSettled(this.running.values());
  }

  /** Runs an erasure under its lease, unless this process runs it already (joined). */
  private runOnce(instanceId: string, erasureId: string): Promise<boolean> {
    const key = `${instanceId}\u0000${erasureId}`;
    const already = this.running.get(key);
    if (already) return already;
    const run = underLease(this.readModels, `erasure:${instanceId}/${erasureId}`, this.owner, ERASURE_LEASE_MS, () => this.erasure.run(instanceId, erasureId))
      .catch((error: unknown) => {
        this.logger.warn(`erasure ${erasureId} of ${instanceId} stopped; the next sweep resumes it from its last step: ${messageOf(error)}`);
        throw error;
      })
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
    return run;
  }
}

import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CONFIG, ParleyConfig } from '../../config/config';
import { PeriodicSweep } from '../../shared/application/operations/periodic-sweep';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { BLOB_STORE, BlobStore } from '../../shared/ports/blob-store.port';
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { attachmentsProjection } from '../../../projections/attachments/attachments.projection';
import { checkpointName } from '../../../projections/projection';
import { AttachmentsReadModel } from './attachments.read-model';

/** The sweep runs this often relative to the grace (so a blob goes at most ~1/6 of the grace late), within these bounds. */
export const orphanSweepIntervalMs = (graceMs: number): number => Math.min(10 * 60_000, Math.max(1_000, Math.floor(graceMs / 6)));

/**
 * Removes blobs no attachment refers to: a put whose event was never appended (the process was
 * killed between the two, or the append failed and so did the clean-up), and temporaries of puts
 * that never finished. Uploads store the bytes first and append the event right after, so a blob
 * is referenced once its `AttachmentUploaded` is in the log; the attachments read model, keyed
 * by the blob key's `<instance>/<attachment>/…` segments, says whether it is.
 *
 * Safe against the two ways a referenced blob could look orphaned:
 * - its event is not appended yet: only blobs older than ORPHAN_BLOB_GRACE_MS (default 1 h; never
 *   less than twice REQUEST_TIMEOUT_MS, which bounds how long an upload's body may take to arrive)
 *   are considered, and only unfinished writes older than that are removed;
 * - its event is appended but not folded: each pass first waits until the attachments projection
 *   has reached the log's head as read when the pass began (the pass is skipped, and retried,
 *   when it lags), so every blob older than the grace has its event, if any, in the read model.
 * Keys of another shape (not written by uploads) are never removed. Several processes may sweep
 * at once: removing a blob twice is fine.
 */
@Injectable()
export class OrphanBlobSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('attachments');
  private readonly graceMs: number;
  private readonly sweeper: PeriodicSweep;
  /**
   * Blobs written before this were judged by an earlier pass of this process (referenced ones
   * stay referenced until the tombstone janitor removes them), so later passes look up only
   * newer ones; a restart judges them all again.
   */
  private judgedBefore = 0;

  constructor(
    private readonly attachments: AttachmentsReadModel,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(CONFIG) config: ParleyConfig,
  ) {
    // An upload streams its body into the put and appends after the request's body is whole, so a
    // put is unfinished, or its blob unrecorded, for at most REQUEST_TIMEOUT_MS (plus the append).
    this.graceMs = Math.max(config.orphanBlobGraceMs, 2 * config.requestTimeoutMs);
    const intervalMs = orphanSweepIntervalMs(this.graceMs);
    this.sweeper = new PeriodicSweep(() => this.pass(), intervalMs, (error) =>
      this.logger.warn(`the orphan blob sweep did not finish; retrying in ${intervalMs} ms: ${String((error as Error)?.message ?? error)}`),
    );
  }

  onApplicationBootstrap(): void {
    this.sweeper.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeper.stop();
  }

  /** One pass now, or the one running. */
  sweep(): Promise<void> {
    return this.sweeper.run();
  }

  private async pass(): Promise<void> {
    const cutoff = this.clock.now().getTime() - this.graceMs;
    const head = await this.events.headPosition();
    // Rejects with projection_lag when the read model is behind: the pass fails and is retried.
    if (head) await this.readYourWrites.waitFor(head, [checkpointName(attachmentsProjection)]);
    const abandoned = await this.blobs.removeAbandonedWrites(new Date(cutoff));
    let removed = 0;
    for await (const { key, writtenAt } of this.blobs.list()) {
      if (this.sweeper.stopped) return;
      const at = writtenAt.getTime();
      if (at >= cutoff || at < this.judgedBefore) continue;
      if (await this.referenced(key)) continue;
      await this.blobs.delete(key);
      removed++;
    }
    this.judgedBefore = cutoff;
    if (removed + abandoned > 0) {
      this.logger.log(`removed ${removed} blob(s) no attachment refers to and ${abandoned} unfinished upload(s), all older than ${this.graceMs} ms`);
    }
  }

  private async referenced(key: string): Promise<boolean> {
    const segments = key.split('/');
    if (segments.length !== 3) return true; // not an upload's key: not ours to judge
    const [instanceId, attachmentId] = segments;
    return (await this.attachments.blobKeyOf(instanceId, attachmentId)) === key;
  }
}

import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { PeriodicSweep } from '../../shared/application/operations/periodic-sweep';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { BLOB_STORE, BlobStore } from '../../shared/ports/blob-store.port';
import { attachmentsProjection } from '../../../projections/attachments/attachments.projection';
import { checkpointName } from '../../../projections/projection';
import { AttachmentsReadModel } from './attachments.read-model';
import { attachmentDecider, attachmentStream } from './domain/attachment.decider';
import { DroppedAttachments } from '../messages/dropped-attachments.port';

/** How often every API process looks for bytes of gone attachments (an indexed query that finds only those). */
export const BLOB_SWEEP_INTERVAL_MS = 2_000;
/** Tombstones handled per query. */
const BATCH = 100;

/**
 * Removes the bytes of attachments that are gone, whatever removed them: a deleted file, a
 * deleted room, a deleted files API uploader; and records the end of each (one gone before its
 * upload too). The attachments projection keeps such an
 * attachment as a tombstone until `AttachmentBlobRemoved` is in its stream, so the work list
 * is durable: a crash between removing the bytes and recording it is finished by the next
 * sweep, after a restart too. Each step is idempotent (removing a missing blob is fine, the
 * decider records a removal once), so several API processes may sweep at the same time.
 */
@Injectable()
export class BlobJanitor implements OnApplicationBootstrap, OnModuleDestroy, DroppedAttachments {
  private readonly logger = new Logger('attachments');
  private readonly sweeper = new PeriodicSweep(() => this.sweepAll(), BLOB_SWEEP_INTERVAL_MS, (error) =>
    this.logger.warn(`removing the bytes of gone attachments failed; retrying in ${BLOB_SWEEP_INTERVAL_MS} ms: ${String((error as Error)?.message ?? error)}`),
  );

  constructor(
    private readonly attachments: AttachmentsReadModel,
    private readonly pipeline: CommandPipeline,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeper.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeper.stop();
  }

  /**
   * Removes one gone attachment's bytes, then records its end (which drops its tombstone and
   * destroys the data key of its names in the log). `blobKey` is empty when it has no bytes.
   */
  async release(instanceId: string, attachmentId: string, blobKey: string): Promise<void> {
    if (blobKey) await this.blobs.delete(blobKey);
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      attachmentStream(instanceId, attachmentId),
      attachmentDecider,
      { type: 'RecordBlobRemoved', id: attachmentId, blobKey, now },
      { instance_id: instanceId, actor: { key_id: 'blob-janitor' }, occurred_at: now },
      // Answered once the tombstone is gone, so the next query of a sweep does not see it again.
      { awaitProjections: [checkpointName(attachmentsProjection)] },
    );
  }

  /**
   * Ends at once what a message's edit or delete took (answered once the attachments read
   * model folded it), so that its bytes and its names in the log are gone before the change is
   * answered; the sweep is what remains when this fails. Another process sweeping the same
   * attachment meanwhile is no error: each step is idempotent.
   */
  async releaseDroppedBy(instanceId: string, messageId: number): Promise<void> {
    for (const doc of await this.attachments.tombstonesCarriedBy(instanceId, messageId)) await this.release(doc.instance_id, doc.id, doc.blob_key ?? '');
  }

  /** One pass over every tombstone; a pass already running is joined rather than doubled. */
  sweep(): Promise<void> {
    return this.sweeper.run();
  }

  private async sweepAll(): Promise<void> {
    while (!this.sweeper.stopped) {
      const tombstones = await this.attachments.tombstones(BATCH);
      for (const doc of tombstones) {
        if (this.sweeper.stopped) return;
        await this.release(doc.instance_id, doc.id, doc.blob_key ?? '');
      }
      if (tombstones.length < BATCH) return;
    }
  }
}

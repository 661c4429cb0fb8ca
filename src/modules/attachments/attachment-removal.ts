import { Inject, Injectable, Logger } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { Actor } from '../../shared/domain/event';
import { AttachmentDocument } from '../../../projections/attachments/attachments.projection';
import { BlobJanitor } from './blob-janitor';
import { attachmentDecider, attachmentStream } from './domain/attachment.decider';

/**
 * Deletes attachments: the event first, then the bytes, so no recorded attachment ever points
 * at missing bytes. The bytes go at once; when that fails (or the process dies first) the
 * deletion still stands, and the blob janitor removes them from the tombstone it left.
 */
@Injectable()
export class AttachmentRemoval {
  private readonly logger = new Logger('attachments');

  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly janitor: BlobJanitor,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async remove(instanceId: string, attachments: readonly AttachmentDocument[], actor: Actor): Promise<void> {
    for (const attachment of attachments) {
      const now = this.clock.now().toISOString();
      await this.pipeline.run(
        attachmentStream(instanceId, attachment.id),
        attachmentDecider,
        { type: 'DeleteAttachment', id: attachment.id, now },
        { instance_id: instanceId, actor, occurred_at: now },
      );
      if (!attachment.blob_key) continue;
      await this.janitor.release(instanceId, attachment.id, attachment.blob_key).catch((error: unknown) => {
        this.logger.warn(`the bytes of deleted attachment ${attachment.id} stay until the next sweep: ${String((error as Error)?.message ?? error)}`);
      });
    }
  }
}

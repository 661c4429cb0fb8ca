import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { Actor } from '../../shared/domain/event';
import { BLOB_STORE, BlobStore } from '../../shared/ports/blob-store.port';
import { AttachmentDocument } from '../../../projections/attachments/attachments.projection';
import { attachmentDecider, attachmentStream } from './domain/attachment.decider';

/**
 * Deletes attachments: the event first, then the bytes, so no recorded attachment ever points
 * at missing bytes (a crash in between leaves an unreferenced blob, never a broken link).
 */
@Injectable()
export class AttachmentRemoval {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
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
      if (attachment.blob_key) await this.blobs.delete(attachment.blob_key);
    }
  }
}

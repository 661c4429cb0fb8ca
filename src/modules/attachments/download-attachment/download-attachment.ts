import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { BLOB_STORE, BlobStore, StoredBlob } from '../../../shared/ports/blob-store.port';
import { AttachmentDocument } from '../../../../projections/attachments/attachments.projection';
import { AttachmentsReadModel } from '../attachments.read-model';
import { attachmentNotFound } from '../domain/attachment.decider';

export class DownloadAttachmentQuery {
  constructor(
    readonly instanceId: string,
    readonly attachmentId: string,
  ) {}
}

export interface Download {
  readonly attachment: AttachmentDocument;
  readonly blob: StoredBlob;
}

/**
 * The bytes behind a signed download link (checked by the route). Read from the read model:
 * a deleted file or a deleted room's attachment is gone, an existing one always has its blob.
 */
@QueryHandler(DownloadAttachmentQuery)
export class DownloadAttachmentHandler implements IQueryHandler<DownloadAttachmentQuery, Download> {
  constructor(
    private readonly attachments: AttachmentsReadModel,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async execute({ instanceId, attachmentId }: DownloadAttachmentQuery): Promise<Download> {
    const attachment = await this.attachments.get(instanceId, attachmentId);
    if (!attachment?.uploaded || !attachment.blob_key) throw attachmentNotFound(attachmentId);
    const blob = await this.blobs.get(attachment.blob_key);
    if (!blob) throw attachmentNotFound(attachmentId);
    return { attachment, blob };
  }
}

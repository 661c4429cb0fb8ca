import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { actingInRequest } from '../../../shared/observability/request-context';
import { badRequest, conflict, DomainError } from '../../../shared/domain/errors';
import { BLOB_STORE, BlobStore } from '../../../shared/ports/blob-store.port';
import { RoomAccess } from '../../rooms/room-access';
import { attachmentDecider, attachmentNotFound, attachmentStream } from '../domain/attachment.decider';
import { MeasuredBytes } from '../measured-bytes';

export class UploadAttachmentCommand {
  constructor(
    readonly instanceId: string,
    readonly attachmentId: string,
    /** The request body, unread. */
    readonly body: Readable,
    /** The request's Content-Length, when it sent one. */
    readonly declaredLength: number | undefined,
    /** The HTTP request's id, named in the event for the audit trail. */
    readonly requestId?: string,
  ) {}
}

const wrongLength = (expected: number, got: number | string) =>
  badRequest('wrong_content_length', `The upload must be exactly ${expected} bytes (the content_length announced), not ${got}`);

/**
 * Step 2 of the v6 upload flow (the signed link was checked by the route): the body must be
 * exactly the announced length. The bytes go to a fresh blob key, and only then is the upload
 * recorded, so a recorded upload always has its bytes and a failed one leaves nothing behind.
 * Repeating an upload with the same bytes is fine (clients retry); other bytes are refused.
 */
@CommandHandler(UploadAttachmentCommand)
export class UploadAttachmentHandler implements ICommandHandler<UploadAttachmentCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly rooms: RoomAccess,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, attachmentId, body, declaredLength, requestId }: UploadAttachmentCommand): Promise<void> {
    const stream = attachmentStream(instanceId, attachmentId);
    const { state } = await this.pipeline.load(stream, attachmentDecider);
    if (!state.exists || state.deleted) throw attachmentNotFound(attachmentId);
    // The room was deleted (and maybe made again under its id) since: its attachments went with it.
    const room = await this.rooms.room(instanceId, state.roomId!).catch((error: unknown) => {
      if (error instanceof DomainError && error.category === 'not_found') return null;
      throw error;
    });
    if (!room || room.createdAt !== state.roomCreatedAt) throw attachmentNotFound(attachmentId);
    const expected = state.contentLength!;
    if (declaredLength !== undefined && declaredLength !== expected) throw wrongLength(expected, declaredLength);
    const bytes = new MeasuredBytes(body, {
      max: expected,
      exact: expected,
      tooMany: () => wrongLength(expected, 'more'),
      wrongSize: (size) => wrongLength(expected, size),
    });

    if (state.upload) {
      const again = await bytes.drain();
      if (again.sha256 !== state.upload.sha256) {
        throw conflict('already_uploaded', `The attachment "${attachmentId}" was already uploaded with other bytes`);
      }
      return;
    }

    const blobKey = `${instanceId}/${attachmentId}/${randomUUID()}`;
    await this.blobs.put(blobKey, bytes, { contentType: state.contentType! });
    const { size, sha256 } = bytes.measurement;
    const now = this.clock.now().toISOString();
    // A failure here may come after the append (projection_lag: "The change was saved"): the
    // bytes stay, and the orphan blob sweep removes them if no event came to refer to them.
    const outcome = await this.pipeline.run(
      stream,
      attachmentDecider,
      { type: 'RecordUpload', id: attachmentId, size, sha256, blobKey, now },
      // No token here: the signed link was issued to the user who announced the attachment.
      {
        instance_id: instanceId,
        actor: actingInRequest({ user_id: state.userId, key_id: 'signed-upload-link' }, requestId),
        occurred_at: now,
      },
    );
    // A concurrent upload of the same bytes was recorded first: this copy is not needed.
    if (outcome.events.length === 0) await this.blobs.delete(blobKey);
  }
}

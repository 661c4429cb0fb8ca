import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { CommandPipeline } from '../../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../../shared/application/tokens';
import { Clock } from '../../../../shared/domain/clock';
import { badRequest } from '../../../../shared/domain/errors';
import { Actor } from '../../../../shared/domain/event';
import { BLOB_STORE, BlobStore } from '../../../../shared/ports/blob-store.port';
import { RequestActor } from '../../../instances/authentication/access-token';
import { kindOfMime, V2AttachmentKind } from '../../../messages/domain/message-parts';
import { RoomAccess } from '../../../rooms/room-access';
import { attachmentDecider, attachmentStream, MAX_ATTACHMENT_BYTES } from '../../domain/attachment.decider';
import { MeasuredBytes } from '../../measured-bytes';
import { fileTooLarge } from './file-form';

export class UploadFileCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
    readonly fileName: string,
    /** The multipart form, read only once the upload is allowed. */
    readonly form: UploadForm,
    readonly actor: RequestActor,
    readonly audit: Actor,
  ) {}
}

/** A files API form as the handler reads it (see FileForm). */
export interface UploadForm {
  /** The part named `file`, or null when the form has none. */
  open(): Promise<{ readonly stream: Readable; readonly contentType: string } | null>;
  /** Reads the rest of the form; rejects a second file. */
  finish(): Promise<void>;
}

const MIME = /^[A-Za-z0-9!#$&^_.+-]{1,127}\/[A-Za-z0-9!#$&^_.+*-]{1,127}(;[\x20-\x7e]{0,200})?$/;

export interface UploadedFile {
  readonly attachmentId: string;
  readonly size: number;
  readonly type: V2AttachmentKind;
}

/**
 * A files API upload: membership (unless su) is checked before any byte is read; the bytes are
 * stored first (at most 5 MiB), then recorded as an attachment of the room under its file name.
 * A newer upload of the same name becomes the current file; earlier uploads keep serving the
 * links already handed out (e.g. in v2 messages) until the file is deleted.
 */
@CommandHandler(UploadFileCommand)
export class UploadFileHandler implements ICommandHandler<UploadFileCommand, UploadedFile> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: UploadFileCommand): Promise<UploadedFile> {
    const room = await this.access.writableAs(c.instanceId, c.roomId, c.userId, c.actor.su);
    const file = await c.form.open();
    if (!file) throw badRequest('missing_file', 'The multipart form needs the file in a part named "file"');
    const contentType = file.contentType;
    if (!MIME.test(contentType)) {
      file.stream.resume();
      throw badRequest('invalid_content_type', 'The file part\'s Content-Type must be a MIME type such as image/png');
    }
    const id = randomUUID();
    const blobKey = `${c.instanceId}/${id}/${randomUUID()}`;
    const bytes = new MeasuredBytes(file.stream, { max: MAX_ATTACHMENT_BYTES, tooMany: () => fileTooLarge() });
    // All or nothing: a failed put leaves no blob.
    await this.blobs.put(blobKey, bytes, { contentType });
    const { size, sha256 } = bytes.measurement;
    try {
      await c.form.finish();
    } catch (error) {
      // Nothing was recorded: the bytes go at once.
      await this.blobs.delete(blobKey).catch(() => undefined);
      throw error;
    }
    const now = this.clock.now().toISOString();
    // A failure here may come after the append (projection_lag: "The change was saved", or an
    // unknown outcome): the bytes stay, and the orphan blob sweep removes them if no event refers to them.
    await this.pipeline.run(
      attachmentStream(c.instanceId, id),
      attachmentDecider,
      {
        type: 'StoreFile',
        id,
        roomId: c.roomId,
        roomCreatedAt: room.createdAt,
        userId: c.userId,
        contentType,
        name: c.fileName,
        fileName: c.fileName,
        size,
        sha256,
        blobKey,
        now,
      },
      { instance_id: c.instanceId, actor: c.audit, occurred_at: now },
    );
    return { attachmentId: id, size, type: kindOfMime(contentType) };
  }
}

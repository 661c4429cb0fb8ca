import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { unprocessable } from '../../shared/domain/errors';
import { MessagePart } from '../messages/domain/message-parts';
import { AttachmentResolver, RenderedAttachment } from '../messages/presentation/attachments.port';
import { RoomAccess } from '../rooms/room-access';
import { attachmentDecider, attachmentNotFound, attachmentStream } from './domain/attachment.decider';
import { AttachmentsReadModel } from './attachments.read-model';
import { parseFileAddress } from './files-api/files-route';
import { AttachmentLinks } from './links/attachment-links';
import { PublicOrigin } from './links/public-origin';
import { renderAttachment } from './render-attachment';

/** Attachment ids are UUIDs; anything else names no attachment (and never reaches a stream name). */
export const ATTACHMENT_ID = /^[A-Za-z0-9-]{1,64}$/;

/** What messages need from attachments (see attachments.port.ts), on the attachments' own streams. */
@Injectable()
export class UploadedAttachments implements AttachmentResolver {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly rooms: RoomAccess,
    private readonly links: AttachmentLinks,
    private readonly origin: PublicOrigin,
    private readonly files: AttachmentsReadModel,
  ) {}

  /**
   * A files API address (what an upload answers as `resource_link`) names the file current
   * under that name when the message is sent; the message keeps that upload, so a newer upload
   * of the same name does not change it, and deleting the file removes it from the message.
   */
  async fromV2Link(instanceId: string, roomId: string, link: { type: string; url: string }): Promise<MessagePart | null> {
    const address = parseFileAddress(link.url);
    if (!address || address.instanceId !== instanceId || address.roomId !== roomId) return null;
    const [current] = await this.files.filesNamed(instanceId, roomId, address.fileName);
    if (!current) return null;
    return this.toStoredPart(instanceId, roomId, { type: link.type, attachment: { id: current.id } });
  }

  /** Decided on write-side state: the attachment's stream and the room's (never a lagging read model). */
  async toStoredPart(
    instanceId: string,
    roomId: string,
    part: { type: string; attachment: { id: string } },
  ): Promise<MessagePart> {
    const id = part.attachment.id;
    if (!ATTACHMENT_ID.test(id)) throw attachmentNotFound(id);
    const room = await this.rooms.room(instanceId, roomId);
    const { state } = await this.pipeline.load(attachmentStream(instanceId, id), attachmentDecider);
    if (!state.exists || state.deleted || state.roomId !== roomId || state.roomCreatedAt !== room.createdAt) {
      throw attachmentNotFound(id);
    }
    if (!state.upload) {
      throw unprocessable('attachment_not_uploaded', `The bytes of the attachment "${id}" have not been uploaded yet`);
    }
    return {
      type: part.type,
      attachment: {
        id,
        name: state.name ?? id,
        size: state.upload.size,
        ...(state.customData !== undefined && { custom_data: state.customData }),
      },
    };
  }

  /** Fresh links each time a message is shown, so a link handed out never outlives its message. */
  render(
    instanceId: string,
    roomId: string,
    attachment: { id: string; name?: string; size?: number; custom_data?: unknown },
  ): RenderedAttachment {
    return renderAttachment(this.links, this.origin.fallback(), instanceId, roomId, attachment);
  }
}

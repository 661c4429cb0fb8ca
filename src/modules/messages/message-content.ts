import { Inject, Injectable } from '@nestjs/common';
import { DomainError, unprocessable } from '../../shared/domain/errors';
import { ChatApiVersion } from '../../shared/http/chatkit-route';
import { validateBody } from '../../shared/http/validation';
import { inlineBytes, MAX_INLINE_BYTES, MessagePart, partsFromV2 } from './domain/message-parts';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from './presentation/attachments.port';
import { V2MessageBodyDto, V6MessageBodyDto } from './presentation/message-body.dto';

/** Reads a message body of either API version into canonical parts, enforcing the size limit. */
@Injectable()
export class MessageContent {
  constructor(@Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver) {}

  async parse(version: ChatApiVersion, instanceId: string, roomId: string, body: unknown): Promise<MessagePart[]> {
    let parts: MessagePart[];
    if (version === 2) {
      const v2 = await validateBody(V2MessageBodyDto, body);
      parts = partsFromV2(v2.text, v2.attachment);
      const link = parts[1] as Extract<MessagePart, { url: string }> | undefined;
      const kept = link && (await this.attachments.fromV2Link(instanceId, roomId, link));
      if (kept) parts = [parts[0], kept];
    } else {
      const v6 = await validateBody(V6MessageBodyDto, body);
      parts = [];
      for (const [i, part] of v6.parts.entries()) {
        // @IsOptional lets null through: null counts as absent.
        const kinds = [part.content, part.url, part.attachment].filter((v) => v != null).length;
        if (kinds !== 1) {
          throw unprocessable('invalid_part', `parts[${i}] must have exactly one of content, url and attachment`);
        }
        if (part.content != null) parts.push({ type: part.type, content: part.content });
        else if (part.url != null) parts.push({ type: part.type, url: part.url });
        else parts.push(await this.attachments.toStoredPart(instanceId, roomId, { type: part.type, attachment: part.attachment! }));
      }
    }
    if (inlineBytes(parts) > MAX_INLINE_BYTES) {
      throw new DomainError(
        'payload_too_large',
        'message_size_limit_exceeded',
        `Inline message content is limited to ${MAX_INLINE_BYTES} bytes`,
      );
    }
    return parts;
  }
}

import { Injectable, Module } from '@nestjs/common';
import { notFound } from '../../shared/domain/errors';
import { ATTACHMENT_RESOLVER, AttachmentResolver, RenderedAttachment } from '../messages/presentation/attachments.port';

// Interim: the attachment upload flow is being built in this module; until then no upload exists.
@Injectable()
class NoUploadsYet implements AttachmentResolver {
  async toStoredPart(_i: string, _r: string, part: { attachment: { id: string } }): Promise<never> {
    throw notFound('attachment_not_found', `The attachment "${part.attachment.id}" does not exist`);
  }
  render(): RenderedAttachment {
    throw new Error('no attachments exist yet');
  }
}

@Module({ providers: [{ provide: ATTACHMENT_RESOLVER, useClass: NoUploadsYet }], exports: [ATTACHMENT_RESOLVER] })
export class AttachmentsModule {}

import { Controller, Get, Param, Req } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CHATKIT_ROUTE, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { AttachmentsReadModel } from '../attachments.read-model';
import { attachmentNotFound } from '../domain/attachment.decider';
import { AttachmentLinks } from '../links/attachment-links';
import { PublicOrigin } from '../links/public-origin';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class GetAttachmentQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly attachmentId: string,
    readonly actor: RequestActor,
    readonly origin: string,
  ) {}
}

export interface AttachmentLinkResponse {
  download_url: string;
  expiration: string;
}

/** A fresh download link for an uploaded attachment of a room the caller may read. */
@QueryHandler(GetAttachmentQuery)
export class GetAttachmentHandler implements IQueryHandler<GetAttachmentQuery, AttachmentLinkResponse> {
  constructor(
    private readonly access: RoomAccess,
    private readonly attachments: AttachmentsReadModel,
    private readonly links: AttachmentLinks,
  ) {}

  async execute({ instanceId, roomId, attachmentId, actor, origin }: GetAttachmentQuery): Promise<AttachmentLinkResponse> {
    await this.access.readable(instanceId, roomId, actor);
    const doc = await this.attachments.uploadedIn(instanceId, roomId, attachmentId);
    if (!doc) throw attachmentNotFound(attachmentId);
    const link = this.links.download(origin, instanceId, attachmentId);
    return { download_url: link.url, expiration: link.expiresAt!.toISOString() };
  }
}

/** What chatkit-client's `Attachment.url()` calls when its link is less than 30 minutes from expiring. */
@Controller(CHATKIT_ROUTE)
export class GetAttachmentController {
  constructor(
    private readonly queries: QueryBus,
    private readonly origin: PublicOrigin,
  ) {}

  @Get('rooms/:roomId/attachments/:attachmentId')
  @Requires(Access.permission('file:get', { room: 'roomId' }))
  get(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) _version: unknown,
    @Param('roomId') roomId: string,
    @Param('attachmentId') attachmentId: string,
    @CurrentActor() actor: RequestActor,
    @Req() request: FastifyRequest,
  ): Promise<AttachmentLinkResponse> {
    return this.queries.execute(
      new GetAttachmentQuery(instanceId, roomId, attachmentId, actor, this.origin.forRequest(request)),
    );
  }
}

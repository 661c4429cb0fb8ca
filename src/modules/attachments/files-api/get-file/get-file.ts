import { Controller, Get, Param, Req } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import type { FastifyRequest } from 'fastify';
import { CurrentActor } from '../../../instances/authentication/access-token.guard';
import { RequestActor } from '../../../instances/authentication/access-token';
import { RoomAccess } from '../../../rooms/room-access';
import { AttachmentsReadModel } from '../../attachments.read-model';
import { AttachmentLinks } from '../../links/attachment-links';
import { PublicOrigin } from '../../links/public-origin';
import { assertFileName, FILES_ROUTE, fileNotFound } from '../files-route';
import { Access } from '../../../roles/access-rules';
import { Requires } from '../../../roles/requires.decorator';

export class GetFileQuery {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly fileName: string,
    readonly actor: RequestActor,
    readonly origin: string,
  ) {}
}

/** The seed's File record. */
export interface FileRecord {
  file: { name: string; bytes: number; last_modified: number };
  /** Serves the bytes until `ttl`. */
  resource_link: string;
  /** Unix time at which resource_link stops working. */
  ttl: number;
}

const unix = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** The current file stored under a name in a room, with a download link that expires. */
@QueryHandler(GetFileQuery)
export class GetFileHandler implements IQueryHandler<GetFileQuery, FileRecord> {
  constructor(
    private readonly access: RoomAccess,
    private readonly attachments: AttachmentsReadModel,
    private readonly links: AttachmentLinks,
  ) {}

  async execute({ instanceId, roomId, fileName, actor, origin }: GetFileQuery): Promise<FileRecord> {
    assertFileName(fileName);
    await this.access.readable(instanceId, roomId, actor);
    const [current] = await this.attachments.filesNamed(instanceId, roomId, fileName);
    if (!current) throw fileNotFound(fileName);
    const link = this.links.download(origin, instanceId, current.id);
    return {
      file: { name: `${instanceId}/${roomId}/${fileName}`, bytes: current.size ?? 0, last_modified: unix(current.uploaded_at!) },
      resource_link: link.url,
      ttl: Math.floor(link.expiresAt!.getTime() / 1000),
    };
  }
}

@Controller(FILES_ROUTE)
export class GetFileController {
  constructor(
    private readonly queries: QueryBus,
    private readonly origin: PublicOrigin,
  ) {}

  @Get('rooms/:roomId/files/:fileName')
  @Requires(Access.permission('file:get', { room: 'roomId' }))
  get(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('fileName') fileName: string,
    @CurrentActor() actor: RequestActor,
    @Req() request: FastifyRequest,
  ): Promise<FileRecord> {
    return this.queries.execute(new GetFileQuery(instanceId, roomId, fileName, actor, this.origin.forRequest(request)));
  }
}

import { Body, Controller, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Allow, IsInt, IsNotEmpty, IsOptional, IsString, Matches, MaxLength, Min } from '../../../shared/http/class-validator-parts';
import type { FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_ROUTE, ChatApiVersionPipe } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RoomAccess } from '../../rooms/room-access';
import { attachmentDecider, attachmentStream } from '../domain/attachment.decider';
import { AttachmentLinks } from '../links/attachment-links';
import { PublicOrigin } from '../links/public-origin';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

const MIME = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+*-]+(\s*;.*)?$/;

/** What chatkit-server and chatkit-client announce before uploading a file part. */
export class CreateAttachmentDto {
  @IsString()
  @MaxLength(255)
  @Matches(MIME, { message: 'content_type must be a MIME type such as image/png' })
  content_type: string;

  @IsInt({ message: 'content_length must be a whole number of bytes' })
  @Min(0)
  content_length: number;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  name?: string;

  @Allow()
  custom_data?: unknown;
}

export class CreateAttachmentCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly userId: string,
    readonly body: CreateAttachmentDto,
    readonly actor: RequestActor,
    readonly audit: Actor,
  ) {}
}

/** A member announces an attachment for a room: its type, exact length and name. Returns its id. */
@CommandHandler(CreateAttachmentCommand)
export class CreateAttachmentHandler implements ICommandHandler<CreateAttachmentCommand, string> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, roomId, userId, body, actor, audit }: CreateAttachmentCommand): Promise<string> {
    const room = await this.access.writableAs(instanceId, roomId, userId, actor.su);
    const id = randomUUID();
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      attachmentStream(instanceId, id),
      attachmentDecider,
      {
        type: 'CreateAttachment',
        id,
        roomId,
        roomCreatedAt: room.createdAt,
        userId,
        contentType: body.content_type,
        contentLength: body.content_length,
        name: body.name ?? id,
        ...(body.custom_data !== undefined && body.custom_data !== null && { customData: body.custom_data }),
        now,
      },
      { instance_id: instanceId, actor: audit, occurred_at: now },
    );
    return id;
  }
}

/** Step 1 of the v6 upload flow: answers the attachment id and a signed URL to PUT the bytes to. */
@Controller(CHATKIT_ROUTE)
export class CreateAttachmentController {
  constructor(
    private readonly commands: CommandBus,
    private readonly links: AttachmentLinks,
    private readonly origin: PublicOrigin,
  ) {}

  @Post('rooms/:roomId/attachments')
  @Requires(Access.permission('file:create', { room: 'roomId' }))
  @HttpCode(201)
  async create(
    @Param('instanceId') instanceId: string,
    @Param('version', ChatApiVersionPipe) _version: unknown,
    @Param('roomId') roomId: string,
    @Body() body: CreateAttachmentDto,
    @CurrentActor() actor: RequestActor,
    @Req() request: FastifyRequest,
  ): Promise<{ attachment_id: string; upload_url: string }> {
    if (!actor.userId) throw badRequest('missing_user', 'The token names no user (sub) to upload the attachment as');
    const id: string = await this.commands.execute(
      new CreateAttachmentCommand(instanceId, roomId, actor.userId, body, actor, auditActor(actor)),
    );
    return { attachment_id: id, upload_url: this.links.upload(this.origin.forRequest(request), instanceId, id).url };
  }
}

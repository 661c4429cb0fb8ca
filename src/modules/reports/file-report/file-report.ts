import { randomUUID } from 'node:crypto';
import { Body, Controller, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { IsIn, IsOptional, IsString, MaxLength } from '../../../shared/http/class-validator-parts';
import type { FastifyReply } from 'fastify';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest, unprocessable } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { messageDecider, messageNotFound, messageStream } from '../../messages/domain/message.decider';
import { parseMessageId } from '../../messages/presentation/message-id.pipe';
import { SentMessages } from '../../messages/sent-messages';
import { RoomAccess } from '../../rooms/room-access';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { userDecider, userNotFound, userStream } from '../../users/domain/user.decider';
import { ReportTarget } from '../domain/report.events';
import { MAX_REASON_LENGTH, openReportAbout, reportsDecider, reportsStream } from '../domain/reports.decider';
import { REPORT_CATEGORIES, ReportCategory } from '../domain/report-vocabulary';
import { REPORT_READS } from '../reports.read-model';

export class ReportBodyDto {
  @IsIn(REPORT_CATEGORIES as unknown as string[], { message: `category must be one of: ${REPORT_CATEGORIES.join(', ')}` })
  category: ReportCategory;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_REASON_LENGTH)
  reason?: string;
}

/** What is reported, as the request names it (a message of a room, or a user). */
export type ReportedThing = { kind: 'message'; roomId: string; messageId: number } | { kind: 'user'; userId: string };

export class FileReportCommand {
  constructor(
    readonly instanceId: string,
    readonly reported: ReportedThing,
    readonly category: ReportCategory,
    readonly reason: string,
    readonly reporterId: string,
    readonly su: boolean,
    readonly actor: Actor,
  ) {}
}

export interface FiledReport {
  readonly id: string;
  readonly status: 'open';
  /** False when an open report of the caller about the same thing already stood: its id is answered. */
  readonly created: boolean;
}

/**
 * Files the caller's report into the review queue, on the reporter's reports stream. A message
 * must be one the reporter can read (member of a private room; su waives it) and not deleted;
 * a user must exist. Nobody reports themselves or their own message.
 */
@CommandHandler(FileReportCommand)
export class FileReportHandler implements ICommandHandler<FileReportCommand, FiledReport> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly access: RoomAccess,
    private readonly sentMessages: SentMessages,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: FileReportCommand): Promise<FiledReport> {
    const { state: reporter } = await this.pipeline.load(userStream(c.instanceId, c.reporterId), userDecider);
    if (!reporter.exists) throw userNotFound(c.reporterId);
    const target = await this.target(c);
    if (target.user_id === c.reporterId) throw unprocessable('cannot_report_self', 'A user cannot report themselves or their own messages');
    const now = this.clock.now().toISOString();
    const reportId = randomUUID();
    const outcome = await this.pipeline.run(
      reportsStream(c.instanceId, c.reporterId),
      reportsDecider,
      { type: 'FileReport', reportId, reporter: { userId: c.reporterId, userCreatedAt: reporter.createdAt! }, target, category: c.category, reason: c.reason, now },
      { instance_id: c.instanceId, actor: c.actor, occurred_at: now },
      { awaitProjections: REPORT_READS },
    );
    if (outcome.events.length > 0) return { id: reportId, status: 'open', created: true };
    return { id: openReportAbout(outcome.state, reporter.createdAt!, target)!, status: 'open', created: false };
  }

  private async target(c: FileReportCommand): Promise<ReportTarget> {
    const { reported } = c;
    if (reported.kind === 'user') {
      const { state: user } = await this.pipeline.load(userStream(c.instanceId, reported.userId), userDecider);
      if (!user.exists) throw userNotFound(reported.userId);
      return { kind: 'user', user_id: reported.userId };
    }
    const room = await this.access.readable(c.instanceId, reported.roomId, { userId: c.reporterId, su: c.su });
    const sent = await this.sentMessages.find(c.instanceId, reported.roomId, reported.messageId);
    const { state } = await this.pipeline.load(messageStream(c.instanceId, reported.messageId), messageDecider);
    if (!sent || sent.roomCreatedAt !== room.createdAt || state.deleted) throw messageNotFound(reported.messageId);
    return { kind: 'message', room_id: reported.roomId, room_created_at: room.createdAt, message_id: reported.messageId, user_id: sent.userId };
  }
}

/**
 * `POST …/rooms/:r/messages/:m/reports` and `POST …/users/:u/reports` `{category, reason?}`:
 * 201 `{id, status}` for a new report, 200 with the same answer when the caller's open report
 * about it already stands (a retry files nothing twice).
 */
@Controller(CHATKIT_V6_ROUTE)
export class FileReportController {
  constructor(private readonly commands: CommandBus) {}

  @Post('rooms/:roomId/messages/:messageId/reports')
  @Requires(Access.permission('report:create', { room: 'roomId' }))
  @HttpCode(201)
  reportMessage(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Body() body: ReportBodyDto,
    @CurrentActor() actor: RequestActor,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ id: string; status: 'open' }> {
    return this.file(instanceId, { kind: 'message', roomId, messageId: parseMessageId(rawId) }, body, actor, reply);
  }

  @Post('users/:userId/reports')
  @Requires(Access.permission('report:create'))
  @HttpCode(201)
  reportUser(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
    @Body() body: ReportBodyDto,
    @CurrentActor() actor: RequestActor,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ id: string; status: 'open' }> {
    return this.file(instanceId, { kind: 'user', userId }, body, actor, reply);
  }

  private async file(instanceId: string, reported: ReportedThing, body: ReportBodyDto, actor: RequestActor, reply: FastifyReply) {
    if (!actor.userId) throw badRequest('missing_user', 'The token names no user (sub) who reports');
    const filed = await this.commands.execute<FileReportCommand, FiledReport>(
      new FileReportCommand(instanceId, reported, body.category, body.reason ?? '', actor.userId, actor.su, auditActor(actor)),
    );
    if (!filed.created) reply.status(200);
    return { id: filed.id, status: filed.status };
  }
}

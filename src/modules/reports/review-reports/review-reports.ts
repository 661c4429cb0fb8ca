import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsIn, IsOptional, IsString, MaxLength } from '../../../shared/http/class-validator-parts';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../../messages/presentation/attachments.port';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { MAX_NOTE_LENGTH, reportNotFound } from '../domain/reports.decider';
import { RESOLUTION_ACTIONS, ResolutionAction } from '../domain/report-vocabulary';
import { ReportsReadModel, ReportStatusFilter } from '../reports.read-model';
import { ResolveReportCommand } from './resolve-report';
import { ReportDocument } from '../../../../projections/reports/reports.projection';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { DomainError } from '../../../shared/domain/errors';
import { contentReadDecider, contentReadStream } from '../../inspector/domain/content-read.decider';
import { presentReport, ReportView } from './present-report';
import { ThreadsReadModel } from '../../threads/threads.read-model';

export const REPORTS_PAGE_DEFAULT = 20;
export const REPORTS_PAGE_MAX = 100;
const STATUSES: readonly ReportStatusFilter[] = ['open', 'resolved', 'all'];

export class ResolveReportDto {
  @IsIn(RESOLUTION_ACTIONS as unknown as string[], { message: `action must be one of: ${RESOLUTION_ACTIONS.join(', ')}` })
  action: ResolutionAction;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_NOTE_LENGTH)
  note?: string;
}

/**
 * The review queue (su tokens of the instance, and the console): `GET reports?status=&after=&limit=`
 * pages it oldest first (`next` is the cursor of a full page), `GET reports/:id` shows one,
 * `POST reports/:id/resolve {action, note?}` closes it.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class ReviewReportsController {
  constructor(
    private readonly reports: ReportsReadModel,
    private readonly messages: MessagesReadModel,
    private readonly threads: ThreadsReadModel,
    private readonly commands: CommandBus,
    private readonly pipeline: CommandPipeline,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get('reports')
  @Requires(Access.su)
  async list(
    @Param('instanceId') instanceId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<{ reports: ReportView[]; next?: string }> {
    const status = query.status ?? 'open';
    if (!STATUSES.includes(status as ReportStatusFilter)) throw unprocessable('invalid_status', `status must be one of: ${STATUSES.join(', ')}`);
    const limit = parseLimit(query.limit, { fallback: REPORTS_PAGE_DEFAULT, max: REPORTS_PAGE_MAX });
    const after = query.after;
    if (after !== undefined && typeof after !== 'string') throw unprocessable('invalid_after', 'after must be given once');
    const docs = await this.reports.page(instanceId, status as ReportStatusFilter, after || undefined, limit + 1);
    const page = docs.slice(0, limit);
    const reports = await Promise.all(page.map((doc) => presentReport(doc, this.messages, this.threads, this.attachments)));
    await this.recordContentReads(instanceId, page, reports, actor);
    return { reports, ...(docs.length > limit && { next: page[page.length - 1].queue_key }) };
  }

  @Get('reports/:reportId')
  @Requires(Access.su)
  async get(@Param('instanceId') instanceId: string, @Param('reportId') reportId: string, @CurrentActor() actor: RequestActor): Promise<ReportView> {
    const doc = await this.reports.get(instanceId, reportId);
    if (!doc) throw reportNotFound(reportId);
    const report = await presentReport(doc, this.messages, this.threads, this.attachments);
    await this.recordContentReads(instanceId, [doc], [report], actor);
    return report;
  }

  /**
   * A reported message shown with its content is a read of it, recorded as the console's room
   * reads are (`MessageContentRead`, one per room, durable before the answer; no content in it):
   * a moderator must see what was reported, and the log says who saw it.
   */
  private async recordContentReads(instanceId: string, docs: readonly ReportDocument[], views: readonly ReportView[], actor: RequestActor): Promise<void> {
    const byRoom = new Map<string, number[]>();
    views.forEach((view, i) => {
      if (view.target.kind === 'message' && view.target.message) byRoom.set(docs[i].room_id!, [...(byRoom.get(docs[i].room_id!) ?? []), view.target.message_id]);
    });
    if (byRoom.size === 0) return;
    const now = this.clock.now().toISOString();
    try {
      for (const [roomId, messageIds] of byRoom) {
        await this.pipeline.run(
          contentReadStream(instanceId, roomId),
          contentReadDecider,
          { type: 'RecordContentRead', roomId, messageIds, now },
          { instance_id: instanceId, actor: auditActor(actor), occurred_at: now },
          { awaitProjections: [] },
        );
      }
    } catch (error) {
      throw Object.assign(
        new DomainError('unavailable', 'content_read_not_recorded', 'The read of the reported messages could not be recorded in the event log, so nothing is shown; it is safe to retry'),
        { cause: error },
      );
    }
  }

  @Post('reports/:reportId/resolve')
  @Requires(Access.su)
  @HttpCode(200)
  async resolve(
    @Param('instanceId') instanceId: string,
    @Param('reportId') reportId: string,
    @Body() body: ResolveReportDto,
    @CurrentActor() actor: RequestActor,
  ): Promise<ReportView> {
    await this.commands.execute(new ResolveReportCommand(instanceId, reportId, body.action, body.note ?? '', actor, auditActor(actor)));
    return this.get(instanceId, reportId, actor);
  }
}

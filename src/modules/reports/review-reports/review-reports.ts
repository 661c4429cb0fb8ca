import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { unprocessable } from '../../../shared/domain/errors';
import { parseLimit } from '../../../shared/http/query-params';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../../messages/presentation/attachments.port';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { MAX_NOTE_LENGTH, reportNotFound, RESOLUTION_ACTIONS, ResolutionAction } from '../domain/reports.decider';
import { ReportsReadModel, ReportStatusFilter } from '../reports.read-model';
import { ResolveReportCommand } from './resolve-report';
import { presentReport, ReportView } from './present-report';

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
    private readonly commands: CommandBus,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
  ) {}

  @Get('reports')
  @Requires(Access.su)
  async list(@Param('instanceId') instanceId: string, @Query() query: Record<string, unknown>): Promise<{ reports: ReportView[]; next?: string }> {
    const status = query.status ?? 'open';
    if (!STATUSES.includes(status as ReportStatusFilter)) throw unprocessable('invalid_status', `status must be one of: ${STATUSES.join(', ')}`);
    const limit = parseLimit(query.limit, { fallback: REPORTS_PAGE_DEFAULT, max: REPORTS_PAGE_MAX });
    const after = query.after;
    if (after !== undefined && typeof after !== 'string') throw unprocessable('invalid_after', 'after must be given once');
    const docs = await this.reports.page(instanceId, status as ReportStatusFilter, after || undefined, limit + 1);
    const page = docs.slice(0, limit);
    const reports = await Promise.all(page.map((doc) => presentReport(doc, this.messages, this.attachments)));
    return { reports, ...(docs.length > limit && { next: page[page.length - 1].queue_key }) };
  }

  @Get('reports/:reportId')
  @Requires(Access.su)
  async get(@Param('instanceId') instanceId: string, @Param('reportId') reportId: string): Promise<ReportView> {
    const doc = await this.reports.get(instanceId, reportId);
    if (!doc) throw reportNotFound(reportId);
    return presentReport(doc, this.messages, this.attachments);
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
    return this.get(instanceId, reportId);
  }
}

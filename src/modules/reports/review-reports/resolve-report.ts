import { Inject } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { unprocessable } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { RequestActor } from '../../instances/authentication/access-token';
import { DeleteMessageCommand } from '../../messages/message-commands';
import { reportNotFound, reportsDecider, reportsStream } from '../domain/reports.decider';
import { ResolutionAction } from '../domain/report-vocabulary';
import { REPORT_READS, ReportsReadModel } from '../reports.read-model';

export class ResolveReportCommand {
  constructor(
    readonly instanceId: string,
    readonly reportId: string,
    readonly action: ResolutionAction,
    readonly note: string,
    readonly requester: RequestActor,
    readonly actor: Actor,
  ) {}
}

/**
 * Closes a report, decided on its reporter's stream (found through the queue, which showed the
 * report before its filing was answered). `delete_message` deletes the reported message first,
 * as the v6 delete does (a message deleted already is no obstacle); a second resolve is a 409.
 */
@CommandHandler(ResolveReportCommand)
export class ResolveReportHandler implements ICommandHandler<ResolveReportCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly reports: ReportsReadModel,
    private readonly commands: CommandBus,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute(c: ResolveReportCommand): Promise<void> {
    const report = await this.reports.get(c.instanceId, c.reportId);
    if (!report) throw reportNotFound(c.reportId);
    if (c.action === 'delete_message') {
      if (report.target_kind !== 'message') throw unprocessable('invalid_action', 'delete_message resolves only a report of a message');
      if (report.status === 'open') await this.deleteReported(c, report.room_id!, report.message_id!);
    }
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      reportsStream(c.instanceId, report.reporter_id),
      reportsDecider,
      { type: 'ResolveReport', reportId: c.reportId, action: c.action, note: c.note, ...(c.requester.userId !== undefined && { resolvedBy: c.requester.userId }), now },
      { instance_id: c.instanceId, actor: c.actor, occurred_at: now },
      { awaitProjections: REPORT_READS },
    );
  }

  private async deleteReported(c: ResolveReportCommand, roomId: string, messageId: number): Promise<void> {
    try {
      await this.commands.execute(new DeleteMessageCommand(c.instanceId, roomId, messageId, false, c.requester, c.actor));
    } catch (error) {
      // Gone already (deleted by its sender, or with its room): the report is resolved all the same.
      if ((error as { reason?: string }).reason !== 'message_not_found' && (error as { reason?: string }).reason !== 'room_not_found') throw error;
    }
  }
}

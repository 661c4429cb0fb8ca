import { Controller, Get, Param } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { notFound } from '../../../shared/domain/errors';
import { RecordedEvent } from '../../../shared/domain/event';
import { presentAuditEvent } from '../../audit/audit-trail';
import { beamsPublishStream } from '../../beams/domain/beams.deciders';
import type { BeamsPublishEvent } from '../../beams/domain/beams.events';
import { publishReport } from '../../beams/domain/publish-report';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** Events read per page of a publish's stream (acceptance, delivery, and each publish-webhook attempt: a few dozen at most). */
const STREAM_PAGE = 500;

/**
 * `GET beams/publishes/:publishId`: a Beams publish's delivery report, what `npm run audit --
 * <instance> publish <id>` prints, over HTTP: `status` (`pending` until every matching device
 * was tried, then `delivered`), the target, who published it and when, the delivery counts,
 * each publish webhook's latest attempt, and `events`, the publish's stream as the audit API
 * shows events (its notification reads `{}` once delivered: it is destroyed then). su tokens.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class BeamsPublishReportController {
  constructor(private readonly pipeline: CommandPipeline) {}

  @Get('beams/publishes/:publishId')
  @Requires(Access.su)
  async report(@Param('instanceId') instanceId: string, @Param('publishId') publishId: string) {
    const events = await this.wholeStream(beamsPublishStream(instanceId, publishId));
    const report = publishReport(events);
    if (!report) throw notFound('publish_not_found', `The instance has no Beams publish "${publishId}"`);
    return { ...report, events: events.map(presentAuditEvent) };
  }

  private async wholeStream(stream: string): Promise<RecordedEvent<BeamsPublishEvent>[]> {
    const events: RecordedEvent<BeamsPublishEvent>[] = [];
    for (;;) {
      const page = (await this.pipeline.readStream(stream, { fromRevision: events.length, maxCount: STREAM_PAGE })) as RecordedEvent<BeamsPublishEvent>[];
      events.push(...page);
      if (page.length < STREAM_PAGE) return events;
    }
  }
}

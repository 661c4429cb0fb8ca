import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import type { FastifyReply } from 'fastify';
import { Readable } from 'node:stream';
import { instanceEventPages } from '../../../shared/application/operations/instance-transfer/instance-event-pages';
import { EVENTS_FILE, toExportedEvent } from '../../../shared/application/operations/instance-transfer/transfer-format';
import { EVENT_STORE, EventStore } from '../../../shared/ports/event-store.port';
import { Actor } from '../../../shared/domain/event';
import { CurrentOperatorActor } from '../../instances/authentication/access-token.guard';
import { RecordExportCommand } from '../../instances/instance-administration';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

/** The instance's events as `npm run export` writes them to events.ndjson: one JSON line each, a page of the log at a time. */
async function* exportedLines(log: EventStore, instanceId: string): AsyncGenerator<string> {
  for await (const page of instanceEventPages(log, instanceId, null)) {
    if (page.events.length) yield page.events.map((event) => JSON.stringify(toExportedEvent(event)) + '\n').join('');
  }
}

/**
 * `GET /instances/:instanceId/export`: the instance's events, in log order, as the NDJSON of
 * `npm run export`'s events.ndjson, streamed as the log is read (a download, never held whole
 * in memory), after an `InstanceExported` event naming the operator is in the log (the export
 * holds it too). Attachments' bytes are not in it: the instance archive (download-export/) and
 * `npm run export` hold those too.
 */
@Controller(PARLEY_OPERATOR_ROUTE)
export class ExportInstanceController {
  constructor(
    @Inject(EVENT_STORE) private readonly log: EventStore,
    private readonly commands: CommandBus,
  ) {}

  @Get('instances/:instanceId/export')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiProduces('application/x-ndjson'))
  @ApiDoc((swagger) => swagger.ApiOkResponse({
    description: `The instance's events, one JSON object a line (stream, revision, id, type, data, metadata, recorded_at, position), as ${EVENTS_FILE} of npm run export`,
    schema: { type: 'string' },
  }))
  async export(@Param('instanceId') instanceId: string, @Res() reply: FastifyReply, @CurrentOperatorActor() actor: Actor): Promise<void> {
    // Recorded first (404 for no instance): who took the content is in the log before any of it leaves.
    await this.commands.execute(new RecordExportCommand(instanceId, actor));
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    await reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="parley-export-${instanceId}-${stamp}.ndjson"`)
      .header('cache-control', 'no-store')
      .send(Readable.from(exportedLines(this.log, instanceId)));
  }
}

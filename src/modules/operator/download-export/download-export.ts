import { Controller, Get, HttpCode, Inject, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InstanceExporter } from '../../../shared/application/operations/instance-transfer/export-instance';
import { packExport } from '../../../shared/application/operations/instance-transfer/export-archive';
import { DomainError, notFound } from '../../../shared/domain/errors';
import { BLOB_STORE, BlobStore } from '../../../shared/ports/blob-store.port';
import { EVENT_STORE, EventStore } from '../../../shared/ports/event-store.port';
import { AuthenticatedRequest } from '../../instances/authentication/access-token.guard';
import { operatorActor } from '../../instances/authentication/operator-token';
import { instanceStream } from '../../instances/domain/instance.decider';
import { RecordExportCommand } from '../../instances/instance-administration';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';
import { TransferSpool } from '../transfer-spool';
import { EXPORT_ARCHIVE_ROUTE, EXPORT_LINK_TTL_SECONDS, ExportLinks } from './export-links';

/**
 * The instance archive as a download a browser saves to disk: `POST …/export/links` (the
 * deployment credential) mints a one-use link for a minute; `GET …/export/archive?…` (the link
 * alone) records the export, writes everything `npm run export` writes into the spool, and sends
 * it as a tar (docs/operations.md), deleting the spool once sent or abandoned.
 */
@Controller(PARLEY_OPERATOR_ROUTE)
export class DownloadExportController {
  private readonly logger = new Logger('export');

  constructor(
    @Inject(EVENT_STORE) private readonly log: EventStore,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly commands: CommandBus,
    private readonly links: ExportLinks,
    private readonly spool: TransferSpool,
  ) {}

  @Post('instances/:instanceId/export/links')
  @HttpCode(201)
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiCreatedResponse({
    description: `A download link of the instance's archive: a path of this server, working once, for ${EXPORT_LINK_TTL_SECONDS} s, with no Authorization header (a browser navigates to it)`,
    schema: { type: 'object', properties: { url: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } }, required: ['url', 'expires_at'] },
  }))
  async mint(@Param('instanceId') instanceId: string, @Req() request: AuthenticatedRequest): Promise<{ url: string; expires_at: string }> {
    if ((await this.log.readStream(instanceStream(instanceId), { maxCount: 1 })).length === 0) {
      throw notFound('instance_not_found', `No instance "${instanceId}"`);
    }
    const link = this.links.mint(instanceId, request.operator!.name);
    return { url: link.url, expires_at: link.expiresAt.toISOString() };
  }

  /** Documented in UNSEEN_ROUTES: it takes no deployment token, which the document would otherwise say of every operator route. */
  @Get(EXPORT_ARCHIVE_ROUTE)
  @Requires(Access.ownCredential('a download link from POST …/export/links (signed, one use, a minute)'))
  @ApiDoc((swagger) => swagger.ApiExcludeEndpoint())
  async download(
    @Param('instanceId') instanceId: string,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    // Fastify answers HEAD on every GET route: a HEAD (a link preview, a crawler) must not spend the link or export anything.
    if (request.method === 'HEAD') {
      throw new DomainError('bad_request', 'method_not_allowed', 'A download link is followed with GET, once', { status: 405 });
    }
    const consoleUser = this.links.redeem(instanceId, query);
    // Recorded first (404 for no instance): who took the content is in the log before any of it leaves.
    await this.commands.execute(new RecordExportCommand(instanceId, operatorActor({ name: consoleUser, issuedAt: 0 }, request.id)));
    const dir = this.spool.next('export');
    // Sent, abandoned by the client or failed, the spool goes (an open file is still read to its end).
    let exporting = true;
    let closed = false;
    reply.raw.once('close', () => {
      closed = true;
      if (!exporting) this.spool.remove(dir);
    });
    try {
      const exporter = new InstanceExporter(this.log, this.blobs, instanceId, dir, 'the operator API', (m) => this.logger.warn(`export of ${instanceId}: ${m}`));
      let complete = false;
      try {
        exporter.open();
        complete = (await exporter.exportToHead()).reachedHead;
      } finally {
        exporter.close(complete);
      }
    } catch (error) {
      this.spool.remove(dir);
      throw TransferSpool.failure(error);
    } finally {
      exporting = false;
    }
    if (closed) return this.spool.remove(dir);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    await reply
      .header('content-type', 'application/x-tar')
      .header('content-disposition', `attachment; filename="parley-export-${instanceId}-${stamp}.tar"`)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .send(packExport(dir));
  }
}

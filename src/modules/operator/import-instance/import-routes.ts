import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { toErrorResponse } from '../../../shared/http/error.filter';
import { AuthenticatedRequest } from '../../instances/authentication/access-token.guard';
import { operatorActor } from '../../instances/authentication/operator-token';
import { Access } from '../../roles/access-rules';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';
import { ImportJobs } from './import-jobs';

export const IMPORT_ROUTE = `/${PARLEY_OPERATOR_ROUTE}/instances/:instanceId/import`;

/**
 * `POST …/instances/:instanceId/import` (the deployment credential): the body is an instance
 * archive (the tar `…/export/archive` sends), any content type, streamed into the spool; 202 with
 * the import job, whose progress `GET …/imports/:importId` tells. A Fastify plugin of its own, as
 * the attachments' byte routes: the JSON API's body parser reads at most 1 MiB of JSON.
 */
@Injectable()
export class ImportRoutes implements OnModuleInit {
  private readonly logger = new Logger('import');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly jobs: ImportJobs,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (typeof fastify?.register !== 'function') return;
    void fastify.register((scope, _options, done) => {
      // The body reaches the handler unread: it is unpacked as it arrives.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, payload, parsed) => parsed(null, payload));
      scope.setErrorHandler((error, request, reply) => {
        const { status, body } = toErrorResponse(error, request.url);
        if (status >= 500) this.logger.error(`${request.method} ${request.url.split('?')[0]} failed`, (error as Error)?.stack);
        // A refused upload's rest is not read: the connection closes after the answer.
        if (!request.raw.complete) void reply.header('connection', 'close');
        void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
      });
      scope.post(IMPORT_ROUTE, { config: { access: Access.operator } }, (request, reply) => this.import(request, reply));
      done();
    });
  }

  private async import(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { instanceId } = request.params as { instanceId: string };
    const header = request.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    const body = request.body instanceof Readable ? request.body : request.raw;
    const operator = (request as AuthenticatedRequest).operator!;
    const job = await this.jobs.receive(instanceId, body, declared, operatorActor(operator, request.id));
    await reply.status(202).header('location', `/${PARLEY_OPERATOR_ROUTE}/instances/${encodeURIComponent(instanceId)}/imports/${job.id}`).send(job);
  }
}

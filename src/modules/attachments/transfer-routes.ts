import multipart from '@fastify/multipart';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { toErrorResponse } from '../../shared/http/error.filter';
import { auditActor, AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { MAX_ATTACHMENT_BYTES } from './domain/attachment.decider';
import { Download, DownloadAttachmentQuery } from './download-attachment/download-attachment';
import { assertFileName, fileAddress } from './files-api/files-route';
import { FileForm } from './files-api/upload-file/file-form';
import { UploadedFile, UploadFileCommand } from './files-api/upload-file/upload-file';
import { AttachmentLinks, DOWNLOAD_ROUTE, UPLOAD_ROUTE } from './links/attachment-links';
import { PublicOrigin } from './links/public-origin';
import { UploadAttachmentCommand } from './upload-attachment/upload-attachment';
import { Access } from '../roles/access-rules';
import { idempotentFastifyRoutes } from '../idempotency/idempotent-fastify-routes';
import { IdempotentRequests } from '../idempotency/idempotent-requests';

export const FILE_UPLOAD_ROUTE = '/services/chatkit_files/v1/:instanceId/rooms/:roomId/users/:userId/files/:fileName';

type Params = Record<string, string>;

/** What the routes declare (see `AccessRule`); the roles module checks the upload's rule before its handler runs. */
const SIGNED_LINK = { config: { access: Access.ownCredential('a link signed by this server (AttachmentLinks)') } };
const FILE_UPLOAD = { config: { access: Access.permission('file:create', { room: 'roomId', self: 'userId' }) } };

/** `filename*` (RFC 6266/5987) so any name survives; the plain `filename` keeps only safe characters. */
const contentDisposition = (name: string): string => {
  const plain = name.replace(/[^A-Za-z0-9._ -]/g, '_');
  return `inline; filename="${plain}"; filename*=UTF-8''${encodeURIComponent(name)}`;
};

/**
 * The routes that move bytes: the signed upload PUT and download GET of attachments, and the
 * files API's multipart upload. They live in one encapsulated Fastify plugin with their own body
 * handling (raw request streams, multipart) so that none of it reaches the JSON API, whose
 * lenient catch-all parser (shared/http/body-parser.ts) reads every body as JSON of at most
 * 1 MiB. Errors have the same shape as everywhere else (toErrorResponse).
 */
@Injectable()
export class TransferRoutes implements OnModuleInit {
  private readonly logger = new Logger('attachments');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly links: AttachmentLinks,
    private readonly origin: PublicOrigin,
    private readonly idempotentRequests: IdempotentRequests,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (typeof fastify?.register !== 'function') return;
    void fastify.register((scope, _options, done) => {
      this.routes(scope).then(() => done(), done);
    });
  }

  private async routes(scope: FastifyInstance): Promise<void> {
    // Bodies reach these routes unread: the handlers stream them where they belong.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    await scope.register(multipart, {
      // One byte over the limit, so our own count (not busboy's silent truncation) refuses it.
      limits: { fileSize: MAX_ATTACHMENT_BYTES + 1, files: 4, fields: 20, fieldSize: 64 * 1024, parts: 30, headerPairs: 100 },
    });
    idempotentFastifyRoutes(scope, this.idempotentRequests);
    scope.setErrorHandler((error, request, reply) => {
      const { status, body } = toErrorResponse(error, request.url);
      if (status >= 500) this.logger.error(`${request.method} ${request.url.split('?')[0]} failed`, (error as Error)?.stack);
      void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
    });

    scope.put(UPLOAD_ROUTE, SIGNED_LINK, (request, reply) => this.upload(request, reply));
    scope.get(DOWNLOAD_ROUTE, SIGNED_LINK, (request, reply) => this.download(request, reply));
    scope.post(FILE_UPLOAD_ROUTE, FILE_UPLOAD, (request, reply) => this.uploadFile(request, reply));
  }

  /** v6 upload flow, step 2: any content type, exactly the announced length, no Authorization. */
  private async upload(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { instanceId, attachmentId } = request.params as Params;
    this.links.verify('PUT', 'upload', instanceId, attachmentId, request.query);
    const header = request.headers['content-length'];
    const declared = header === undefined ? undefined : Number(header);
    const body = request.body instanceof Readable ? request.body : request.raw;
    await this.commands.execute(new UploadAttachmentCommand(instanceId, attachmentId, body, declared, request.id));
    await reply.status(204).send();
  }

  private async download(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { instanceId, attachmentId } = request.params as Params;
    this.links.verify('GET', 'download', instanceId, attachmentId, request.query);
    const { attachment, blob }: Download = await this.queries.execute(new DownloadAttachmentQuery(instanceId, attachmentId));
    await reply
      .header('content-type', blob.contentType)
      .header('content-length', String(blob.size))
      .header('content-disposition', contentDisposition(attachment.name))
      // The bytes are user content: never sniffed into something else, never run as a page of this origin.
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', 'sandbox')
      .header('cache-control', 'private, max-age=300')
      .send(blob.stream);
  }

  /** Files API: `multipart/form-data` with the file in the part named `file`; other parts are ignored. */
  private async uploadFile(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { instanceId, roomId, userId, fileName } = request.params as Params;
    // The verified caller, in this request: its events name the request (and carry its Idempotency-Key record).
    const actor = { ...(request as AuthenticatedRequest).actor!, requestId: request.id };
    assertFileName(fileName);
    const uploaded: UploadedFile = await this.commands.execute(
      new UploadFileCommand(instanceId, roomId, userId, fileName, new FileForm(request), actor, auditActor(actor)),
    );
    // Seed: the address of the get-file call. chatkit-client sends this object on as a v2
    // message's `attachment` (name included, as its tests expect); the message then keeps the file.
    await reply.status(200).send({
      resource_link: fileAddress(this.origin.forRequest(request), instanceId, roomId, fileName),
      type: uploaded.type,
      name: fileName,
    });
  }
}

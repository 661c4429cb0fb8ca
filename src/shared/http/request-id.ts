import { randomUUID } from 'node:crypto';
import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { requestContext } from '../observability/request-context';

export const REQUEST_ID_HEADER = 'x-request-id';
/** What a client's X-Request-Id may be: short and plain, so it is safe in logs and headers. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The client's X-Request-Id when it is acceptable, otherwise a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && ACCEPTED_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Fastify options that make `request.id` the request id (Fastify's own header handling does not validate). */
export const requestIdOptions: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'> = {
  requestIdHeader: false,
  genReqId: requestIdOf,
};

const RESOURCE = Symbol('parley.requestResource');

/**
 * Echoes the request id in the response and runs the request's handler inside its
 * `requestContext`. Fastify runs hooks after body parsing from the request stream's own
 * async context, so the context is entered again before validation (what
 * @fastify/request-context does).
 */
export function registerRequestId(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    requestContext.run({ requestId: request.id }, () => {
      const resource = new AsyncResource('parley-request');
      (request as unknown as Record<symbol, AsyncResource>)[RESOURCE] = resource;
      resource.runInAsyncScope(done, request.raw);
    });
  });
  fastify.addHook('preValidation', (request, _reply, done) => {
    const resource = (request as unknown as Record<symbol, AsyncResource | undefined>)[RESOURCE];
    if (resource) resource.runInAsyncScope(done, request.raw);
    else done();
  });
}

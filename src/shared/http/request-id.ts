import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';
/** What a client's X-Request-Id may be: short and plain, so it is safe in logs and headers. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The client's X-Request-Id when it is acceptable, otherwise a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && ACCEPTED_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The ids of the requests this process is handling. A request's id names it to its commands
 * (`actingInRequest`: its events' `request_id`, an `Idempotency-Key`'s record), so two requests in
 * flight never share one: a client's id already in use gets a new one.
 */
const inFlight = new Set<string>();

/** The request's id: the client's X-Request-Id when acceptable and not in use by another request in flight, otherwise a new UUID. */
function uniqueRequestIdOf(request: IncomingMessage): string {
  let id = requestIdOf(request);
  if (inFlight.has(id)) id = randomUUID();
  inFlight.add(id);
  return id;
}

/** Fastify options that make `request.id` the request id (Fastify's own header handling does not validate). */
export const requestIdOptions: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'> = {
  requestIdHeader: false,
  genReqId: uniqueRequestIdOf,
};

/**
 * Echoes the request id in the response. The write path names it in its events through the
 * request's audit actor (`actingInRequest`), and the access log through `request.id`.
 */
export function registerRequestId(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  fastify.addHook('onResponse', (request, _reply, done) => {
    inFlight.delete(request.id);
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    inFlight.delete(request.id);
    done();
  });
}

/** The id of the request a Nest route serves (`request.id`), for commands that name it in their events. */
export const RequestId = createParamDecorator((_: unknown, context: ExecutionContext): string => context.switchToHttp().getRequest<{ id: string }>().id);

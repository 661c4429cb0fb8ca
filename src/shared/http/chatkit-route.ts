import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../domain/errors';
import { toErrorResponse } from './error.filter';

/** Chat routes serve both API versions the SDKs use, over the same data (wire study §7.1). */
export const CHATKIT_ROUTE = 'services/chatkit/:version/:instanceId';

/** Parley's own chat routes (reactions, pins): the v6 tree only, since v2 clients never ask for them. */
export const CHATKIT_V6_ROUTE = 'services/chatkit/v6/:instanceId';

export type ChatApiVersion = 2 | 6;

/** `v2` → 2, `v6` → 6; any other version is a route that does not exist. */
export const parseChatApiVersion = (raw: string): ChatApiVersion => {
  if (raw === 'v2') return 2;
  if (raw === 'v6') return 6;
  if (raw === 'v5') {
    throw notFound('route_not_found', `Chat API v5 serves only ${CHAT_V5_ROUTES.map((r) => r.replace(' ', ' /')).join(', ')} (v2 and v6 serve every route)`);
  }
  throw notFound('route_not_found', `Chat API version ${raw} does not exist (v2 and v6 do)`);
};

@Injectable()
export class ChatApiVersionPipe implements PipeTransform<string, ChatApiVersion> {
  transform(value: string, _metadata: ArgumentMetadata): ChatApiVersion {
    return parseChatApiVersion(value);
  }
}

/**
 * The chat API v5 routes Parley serves, as `METHOD path` below CHATKIT_ROUTE: exactly the v5
 * calls of the SDKs it serves. chatkit-server 2.4.0 and chatkit-client 1.14.1 send nothing to
 * v5 (they use v2 and v6); chatkit-client 1.14.1's own integration suite deletes a message
 * through v5 with an su token (`deleteMessageV5` in tests/integration/main.js). v5 answers
 * these exactly as v6 does.
 */
export const CHAT_V5_ROUTES: readonly string[] = ['DELETE rooms/:roomId/messages/:messageId'];

const V5_ROUTES = new Set(CHAT_V5_ROUTES.map((route) => route.replace(' ', ` /${CHATKIT_ROUTE}/`)));

/** Whether chat API v5 serves a call, by its method and its route pattern as the router registered it. */
export const servedByV5 = (method: string, route: string | undefined): boolean =>
  route !== undefined && V5_ROUTES.has(`${method} ${route.startsWith('/') ? route : `/${route}`}`);

const CHAT_VERSION = /^\/services\/chatkit\/([^/?]+)\//;

/**
 * Every chat HTTP route answers under v2 and v6, and the few of CHAT_V5_ROUTES under v5 too.
 * (Subscriptions opened over /ws never pass this hook: their handlers parse the version with
 * `parseChatApiVersion`.)
 */
export function rejectUnknownChatVersions(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const version = CHAT_VERSION.exec(request.url)?.[1];
    if (version === undefined) return done();
    if (version === 'v5' && servedByV5(request.method, request.routeOptions.url)) return done();
    try {
      parseChatApiVersion(version);
      done();
    } catch (error) {
      const { status, body } = toErrorResponse(error, request.url);
      void reply.status(status).send(body);
    }
  });
}

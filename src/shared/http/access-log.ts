import type { FastifyInstance } from 'fastify';
import type { Logger } from '../../infrastructure/logger';
import { recordHttpRequest } from '../observability/metrics';

/**
 * The instance a path names: `/services/<service>/<version>/<instance>/…` (Chatkit, feeds, audit)
 * or `/{publish,user,device}_api/v1/instances/<instance>/…` (Beams).
 */
const INSTANCE_IN_PATH = /^\/(?:services\/[^/?]+\/[^/?]+|(?:publish|user|device)_api\/v1\/instances)\/([^/?]+)/;

/** The instance id for the access log, or undefined when the path names none. */
export const instanceInPath = (url: string): string | undefined => INSTANCE_IN_PATH.exec(url)?.[1].slice(0, 128);

/**
 * One info line per request once its connection is done with it (method, route pattern,
 * status, duration, instance, request id) and its metrics. It listens for the response's
 * `close` rather than Fastify's onResponse, which hijacked replies (SUBSCRIBE streams) never
 * reach; a stream's line comes when it ends, its duration the stream's life. Only the route
 * pattern is logged, never the URL: paths carry ids and queries carry signed-link secrets;
 * headers and bodies are never logged. Fastify's own request logging stays off (the adapter
 * is built without a logger), so nothing logs twice.
 */
export function registerAccessLog(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.raw.once('close', () => {
      const route = request.routeOptions.url ?? 'unmatched';
      const status = reply.raw.statusCode;
      const ms = reply.elapsedTime;
      recordHttpRequest(request.method, route, status, ms / 1000);
      if (!logger.isLevelEnabled('info')) return; // LOG_LEVEL=warn or above: no line to build
      logger.info(
        {
          req_id: request.id,
          method: request.method,
          route,
          status,
          duration_ms: Math.round(ms * 10) / 10,
          instance: instanceInPath(request.url),
          // The client went away before the whole answer was sent (or a stream was closed by it).
          ...(!reply.raw.writableFinished && { client_gone: true }),
        },
        'request',
      );
    });
    done();
  });
}

/** How a /ws subscription ended: the client unsubscribed, the server ended it (its status), or its socket closed. */
export type SubscriptionEnd = { readonly by: 'client' | 'socket' } | { readonly by: 'server'; readonly status: number };

/**
 * The access log of the `/ws` bridge, in the shape of the HTTP lines: one `request` line per
 * connection when it closes (route `/ws`, status 101, how long it was open, how many
 * subscriptions it opened), or when its upgrade is refused; and `subscription` lines as each
 * subscription on it opens (or is refused, with the status its end-of-stream frame carried)
 * and closes. Subscription lines carry the connection's request id and the client's
 * subscription id, the route pattern and instance (never the path, whose ids and query may be
 * private, and never the frame's headers, which carry the token).
 */
export class WebSocketAccessLog {
  constructor(private readonly logger: Logger) {}

  connection(line: { req_id: string; status: number; duration_ms: number; subscriptions: number; close_code?: number }): void {
    if (!this.logger.isLevelEnabled('info')) return;
    this.logger.info({ ...line, method: 'GET', route: '/ws', duration_ms: tenths(line.duration_ms) }, 'request');
  }

  subscriptionOpened(line: { req_id: string; sub_id: unknown; route: string; path: string; status: number; duration_ms: number }): void {
    if (!this.logger.isLevelEnabled('info')) return;
    const { path, ...rest } = line;
    this.logger.info(
      { ...rest, sub_id: subscriptionId(line.sub_id), event: line.status === 200 ? 'opened' : 'refused', instance: instanceInPath(path), duration_ms: tenths(line.duration_ms) },
      'subscription',
    );
  }

  subscriptionClosed(line: { req_id: string; sub_id: unknown; route: string; path: string; duration_ms: number; end: SubscriptionEnd }): void {
    if (!this.logger.isLevelEnabled('info')) return;
    const { path, end, ...rest } = line;
    this.logger.info(
      {
        ...rest,
        sub_id: subscriptionId(line.sub_id),
        event: 'closed',
        instance: instanceInPath(path),
        closed_by: end.by,
        ...(end.by === 'server' && { status: end.status }),
        duration_ms: tenths(line.duration_ms),
      },
      'subscription',
    );
  }
}

const tenths = (ms: number) => Math.round(ms * 10) / 10;
/** The client's subscription id as it sent it, if it is a number (anything else is not logged). */
const subscriptionId = (id: unknown) => (typeof id === 'number' && Number.isFinite(id) ? id : null);

import type { FastifyInstance } from 'fastify';
import type { Logger } from '../../infrastructure/logger';
import { recordHttpRequest } from '../observability/metrics';

/** The Chatkit instance a service path names: `/services/<service>/<version>/<instance>/…`. */
const INSTANCE_IN_PATH = /^\/services\/[^/?]+\/[^/?]+\/([^/?]+)/;

/**
 * One info line per answered request (method, route pattern, status, duration, instance,
 * request id) and its metrics. Only the route pattern is logged, never the URL: paths carry
 * ids and queries carry signed-link secrets; headers and bodies are never logged. Fastify's
 * own request logging stays off (the adapter is built without a logger), so nothing logs twice.
 */
export function registerAccessLog(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    recordHttpRequest(request.method, route, status, ms / 1000);
    logger.info(
      {
        req_id: request.id,
        method: request.method,
        route,
        status,
        duration_ms: Math.round(ms * 10) / 10,
        instance: INSTANCE_IN_PATH.exec(request.url)?.[1].slice(0, 128),
      },
      'request',
    );
    done();
  });
}

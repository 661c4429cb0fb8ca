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

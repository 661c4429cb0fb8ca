import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { DomainError } from '../../shared/domain/errors';
import { toErrorResponse } from '../../shared/http/error.filter';
import { HealthSources } from '../health/health-sources';
import { projectionHealth } from '../health/readiness';
import { MetricsScrape } from './metrics-scrape';

export interface WorkerMetricsServer {
  /** The port listened on (METRICS_PORT, or the one the system chose for 0). */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * GET /metrics for a projector worker, which has no HTTP API: the same registry, METRICS_TOKEN
 * check and projection lag as the API's route, on a bare node:http listener (a worker needs
 * nothing else, so no framework).
 */
export async function startWorkerMetricsServer(options: {
  readonly port: number;
  readonly host: string;
  readonly metricsToken: string | undefined;
  readonly sources: HealthSources;
  readonly onError: (error: unknown) => void;
}): Promise<WorkerMetricsServer> {
  const scrape = new MetricsScrape(options.metricsToken);
  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== '/metrics') throw new DomainError('not_found', 'route_not_found', `No route serves ${path}; this listener serves GET /metrics only`);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      throw new DomainError('bad_request', 'method_not_allowed', 'GET /metrics is the only route here', { status: 405 });
    }
    const refusal = scrape.refusal(request.headers.authorization);
    if (refusal) {
      for (const [name, value] of Object.entries(refusal.headers)) response.setHeader(name, value);
      throw refusal.error;
    }
    const text = await scrape.render(await projectionHealth(options.sources));
    response.writeHead(200, { 'content-type': scrape.contentType });
    response.end(request.method === 'HEAD' ? undefined : text);
  };
  const server = createServer((request, response) => {
    request.resume(); // a body is never read: drain it so the connection can be reused
    answer(request, response).catch((error: unknown) => {
      const { status, body } = toErrorResponse(error, request.url ?? '/');
      if (status >= 500) options.onError(error);
      if (response.headersSent) return void response.destroy();
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

import { loadConfig } from '../config/config';
import { messageOf } from '../shared/domain/errors';
import { ALL_PROJECTIONS } from '../../projections';
import type { ProjectionDefinition } from '../../projections/projection';
import { startWorkerMetricsServer, WorkerMetricsServer } from '../modules/metrics/worker-metrics-server';
import { startServer } from './create-app';
import { healthSources } from './health-sources';
import type { Service } from './process';
import { openRuntime } from './runtime';
import { listenWhileStarting } from './startup-listener';
import { startWebhookDelivery } from './webhook-delivery';

/**
 * What each of Parley's processes runs, configured from the environment (src/main*.ts run them
 * until signalled). `projections` is what the release lists (projections/index.ts); the upgrade
 * tests start a release listing a bumped version through it.
 */

/** The embedded default: the API and the projectors in one process (`npm start`). */
export async function startEmbedded(projections: readonly ProjectionDefinition[] = ALL_PROJECTIONS): Promise<Service> {
  const config = loadConfig();
  // While the projectors fold what they missed, liveness answers and readiness says `starting`.
  let startup: { close(): Promise<void> } | undefined;
  const runtime = await openRuntime(
    config,
    'embedded',
    {
      beforeCatchUp: async () => {
        if (config.port !== 0) startup = await listenWhileStarting(config.port, config.host);
      },
    },
    projections,
  );
  return startServer(runtime, { beforeListen: () => startup?.close() ?? Promise.resolve() });
}

/** Production API process: serves requests; projector workers fold the log. */
export async function startApi(projections: readonly ProjectionDefinition[] = ALL_PROJECTIONS): Promise<Service> {
  const runtime = await openRuntime(loadConfig(), 'separate', {}, projections);
  return startServer(runtime);
}

/**
 * Production projector worker: folds the log into the read models. Run one or more; each
 * projection is held by one worker at a time through its lease, and another takes over
 * when a worker stops. With METRICS_PORT set it serves GET /metrics there (it has no API).
 */
export async function startProjectorWorker(projections: readonly ProjectionDefinition[] = ALL_PROJECTIONS): Promise<Service> {
  const runtime = await openRuntime(loadConfig(), 'in-process', {}, projections);
  const { config, logger } = runtime;
  let metrics: WorkerMetricsServer | null = null;
  if (config.metricsPort !== undefined) {
    try {
      metrics = await startWorkerMetricsServer({
        port: config.metricsPort,
        host: config.host,
        metricsToken: config.metricsToken,
        sources: healthSources(runtime),
        onError: (err) => logger.error({ err }, 'a metrics scrape failed'),
      });
    } catch (error) {
      await runtime.close();
      throw new Error(`METRICS_PORT ${config.metricsPort}: ${messageOf(error)}`);
    }
    if (!config.metricsToken) logger.warn('METRICS_PORT is set but METRICS_TOKEN is not: /metrics answers 404 until it is');
  }
  const webhookDelivery = startWebhookDelivery(runtime);
  logger.info({ projections: runtime.runner?.running, metricsPort: metrics?.port }, 'projector worker running');
  return {
    close: async () => {
      await webhookDelivery.stop();
      await metrics?.close();
      await runtime.close();
    },
    shutdownTimeoutMs: config.shutdownTimeoutMs,
  };
}

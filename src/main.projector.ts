import 'reflect-metadata';
import { loadConfig } from './config/config';
import { openRuntime } from './app/runtime';
import { runUntilSignalled } from './app/process';
import { messageOf } from './shared/domain/errors';
import { healthSources } from './app/health-sources';
import { startWorkerMetricsServer, WorkerMetricsServer } from './modules/metrics/worker-metrics-server';

/**
 * Production projector worker: folds the log into the read models. Run one or more; each
 * projection is held by one worker at a time through its lease, and another takes over
 * when a worker stops. With METRICS_PORT set it serves GET /metrics there (it has no API).
 */
runUntilSignalled(async () => {
  const runtime = await openRuntime(loadConfig(), 'in-process');
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
  logger.info({ projections: runtime.runner?.running, metricsPort: metrics?.port }, 'projector worker running');
  return {
    close: async () => {
      await metrics?.close();
      await runtime.close();
    },
    shutdownTimeoutMs: config.shutdownTimeoutMs,
  };
});

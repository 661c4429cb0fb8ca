import 'reflect-metadata';
import { loadConfig } from './config/config';
import { openRuntime } from './app/runtime';
import { runUntilSignalled } from './app/process';

/**
 * Production projector worker: folds the log into the read models. Run one or more; each
 * projection is held by one worker at a time through its lease, and another takes over
 * when a worker stops.
 */
runUntilSignalled(async () => {
  const runtime = await openRuntime(loadConfig(), 'in-process');
  runtime.logger.info({ projections: runtime.runner?.running }, 'projector worker running');
  return { close: () => runtime.close(), shutdownTimeoutMs: runtime.config.shutdownTimeoutMs };
});

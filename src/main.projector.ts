import 'reflect-metadata';
import { runUntilSignalled } from './app/process';
import { startProjectorWorker } from './app/entry-points';

/**
 * Production projector worker: folds the log into the read models. Run one or more; each
 * projection is held by one worker at a time through its lease, and another takes over
 * when a worker stops. With METRICS_PORT set it serves GET /metrics there (it has no API).
 */
runUntilSignalled(() => startProjectorWorker());

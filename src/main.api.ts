import 'reflect-metadata';
import { loadConfig } from './config/config';
import { openRuntime } from './app/runtime';
import { startServer } from './app/create-app';
import { runUntilSignalled } from './app/process';

/** Production API process: serves requests; projector workers (main.projector) fold the log. */
runUntilSignalled(async () => {
  const runtime = await openRuntime(loadConfig(), 'separate');
  return startServer(runtime);
});

import 'reflect-metadata';
import { loadConfig } from './config/config';
import { openRuntime } from './app/runtime';
import { startServer } from './app/create-app';
import { runUntilSignalled } from './app/process';

/** The embedded default: the API and the projectors in one process (`npm start`). */
runUntilSignalled(async () => {
  const runtime = await openRuntime(loadConfig(), 'embedded');
  return startServer(runtime);
});

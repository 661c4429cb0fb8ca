import 'reflect-metadata';
import { loadConfig } from './config/config';
import { openRuntime } from './app/runtime';
import { startServer } from './app/create-app';
import { runUntilSignalled } from './app/process';
import { listenWhileStarting } from './app/startup-listener';

/** The embedded default: the API and the projectors in one process (`npm start`). */
runUntilSignalled(async () => {
  const config = loadConfig();
  // While the projectors fold what they missed, liveness answers and readiness says `starting`.
  let startup: { close(): Promise<void> } | undefined;
  const runtime = await openRuntime(config, 'embedded', {
    beforeCatchUp: async () => {
      if (config.port !== 0) startup = await listenWhileStarting(config.port, config.host);
    },
  });
  return startServer(runtime, { beforeListen: () => startup?.close() ?? Promise.resolve() });
});

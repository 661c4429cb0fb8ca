import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { CommandBus } from '@nestjs/cqrs';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { registerLenientJsonParser } from '../shared/http/body-parser';
import { ErrorFilter } from '../shared/http/error.filter';
import { rejectUnknownChatVersions } from '../shared/http/chatkit-route';
import { RequestValidationPipe } from '../shared/http/validation';
import { PinoNestLogger } from '../infrastructure/logger';
import { Readiness } from '../modules/health/readiness';
import { CreateInstanceCommand } from '../modules/instances/create-instance/create-instance.handler';
import { CreateKeyCommand } from '../modules/instances/create-key/create-key.handler';
import { SetTokenProviderCommand } from '../modules/instances/set-token-provider/set-token-provider.handler';
import { AppModule } from './app.module';
import { SubscriptionRoutes } from '../modules/streaming/subscription-routes';
import { registerHttpSubscribe } from '../modules/streaming/http-subscribe.transport';
import { WebSocketBridge } from '../modules/streaming/websocket-bridge.transport';
import { Runtime } from './runtime';

export interface RunningServer {
  readonly app: NestFastifyApplication;
  readonly httpPort: number;
  readonly httpsPort?: number;
  close(): Promise<void>;
}

/** Builds the Nest application on Fastify with the wire quirks the SDKs need. */
export async function createApp(runtime: Runtime): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({ forceCloseConnections: true, bodyLimit: 1024 * 1024 });
  const fastify = adapter.getInstance();
  // The Pusher SDKs and feeds clients open streams with the custom verb SUBSCRIBE.
  fastify.addHttpMethod('SUBSCRIBE');
  registerLenientJsonParser(fastify);
  rejectUnknownChatVersions(fastify);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRuntime(runtime), adapter, {
    logger: new PinoNestLogger(runtime.logger),
    bodyParser: false,
  });
  registerHttpSubscribe(fastify, app.get(SubscriptionRoutes), runtime.config.keepAliveMs);
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalPipes(new RequestValidationPipe());
  app.enableShutdownHooks();
  return app;
}

/** Creates the instance and key named by INSTANCE_LOCATOR / INSTANCE_KEY if they are absent. */
export async function bootstrapInstance(app: NestFastifyApplication, runtime: Runtime): Promise<void> {
  const bootstrap = runtime.config.bootstrap;
  if (!bootstrap) return;
  const commands = app.get(CommandBus);
  const actor = { key_id: 'bootstrap' };
  await commands.execute(new CreateInstanceCommand(bootstrap.instanceId, bootstrap.cluster, actor));
  if (bootstrap.keyId && bootstrap.keySecret) {
    await commands.execute(new CreateKeyCommand(bootstrap.instanceId, bootstrap.keyId, bootstrap.keySecret, actor, true));
  }
  if (bootstrap.tokenProviderEnabled) {
    await commands.execute(new SetTokenProviderCommand(bootstrap.instanceId, true, actor));
  }
}

/** Starts the HTTP listener and, when configured, an HTTPS listener serving the same app. */
export async function startServer(runtime: Runtime): Promise<RunningServer> {
  const app = await createApp(runtime);
  await app.init();
  await bootstrapInstance(app, runtime);
  const { config } = runtime;
  const bridge = new WebSocketBridge(app.get(SubscriptionRoutes));
  bridge.attach(app.getHttpServer());
  await app.listen(config.port, config.host);
  const httpPort = (app.getHttpServer().address() as AddressInfo).port;
  let https: HttpsServer | undefined;
  let httpsPort: number | undefined;
  if (config.httpsPort !== undefined) {
    const fastify = app.getHttpAdapter().getInstance();
    https = createHttpsServer(
      { cert: readFileSync(config.tlsCertFile!), key: readFileSync(config.tlsKeyFile!) },
      (req, res) => fastify.routing(req, res),
    );
    await new Promise<void>((resolve, reject) => {
      https!.once('error', reject);
      https!.listen(config.httpsPort, config.host, () => resolve());
    });
    bridge.attach(https);
    httpsPort = (https.address() as AddressInfo).port;
  }
  const readiness = app.get(Readiness);
  runtime.logger.info({ httpPort, httpsPort }, 'Parley is listening');
  // From here /health computes readiness (projections caught up, live log, storage) on every call.
  readiness.state = 'serving';
  return {
    app,
    httpPort,
    httpsPort,
    async close() {
      readiness.state = 'stopping';
      await bridge.close();
      if (https) {
        https.closeAllConnections();
        await new Promise((r) => https!.close(() => r(undefined)));
      }
      await app.close();
      await runtime.close();
    },
  };
}

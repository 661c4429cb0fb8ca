import { startEmbeddedWebhookDelivery } from './webhook-delivery';
import { PublicOrigin } from '../modules/attachments/links/public-origin';
import { WEBHOOK_CONTEXT_AT, WebhookContextAt } from '../modules/webhooks/deliver-webhooks/webhook-context';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { CommandBus } from '@nestjs/cqrs';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, Server as HttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { JSON_BODY_LIMIT_BYTES, registerLenientJsonParser } from '../shared/http/body-parser';
import { ErrorFilter, toErrorResponse } from '../shared/http/error.filter';
import { DomainError } from '../shared/domain/errors';
import { rejectUnknownChatVersions } from '../shared/http/chatkit-route';
import { RequestValidationPipe } from '../shared/http/validation';
import { corsOptions, upgradeOriginAllowed } from '../shared/http/cors';
import { frameworkErrorOptions } from '../shared/http/framework-errors';
import { lazySchemaCompilers } from '../shared/http/lazy-schema-compilers';
import { registerRateLimits } from '../shared/http/rate-limit';
import { AccessTokenVerifier } from '../modules/instances/authentication/access-token';
import { PinoNestLogger } from '../infrastructure/logger';
import { registerRequestId, requestIdOptions } from '../shared/http/request-id';
import { registerAccessLog, WebSocketAccessLog } from '../shared/http/access-log';
import { registerUnreadBodyDrain, UnreadBodies } from '../shared/http/unread-body-drain';
import { clientAddressOf, trustedProxies } from '../shared/http/client-address';
import { Readiness } from '../modules/health/readiness';
import { beamsErrorFor } from '../modules/beams/beams-routes';
import { PresenceTracker } from '../modules/presence/presence-tracker';
import { CreateInstanceCommand } from '../modules/instances/create-instance/create-instance.handler';
import { CreateKeyCommand } from '../modules/instances/create-key/create-key.handler';
import { SetTokenProviderCommand } from '../modules/instances/set-token-provider/set-token-provider.handler';
import { CredentialWarnings } from '../modules/instances/credential-warnings';
import { AppModule } from './app.module';
import { SubscriptionRoutes } from '../modules/streaming/subscription-routes';
import { registerHttpSubscribe } from '../modules/streaming/http-subscribe.transport';
import type { OpenStreams } from '../modules/streaming/open-streams';
import { WebSocketBridge } from '../modules/streaming/websocket-bridge.transport';
import { Runtime } from './runtime';
import { OpenApiDocument } from '../modules/api-docs/openapi-document';
import { collectStartUpGarbage } from '../infrastructure/start-up-garbage';
import { storeKeyedAnswers } from '../modules/idempotency/keyed-requests';
import { registerDemoPage } from './demo-page';
import { registerConsolePage } from './console-page';

export interface RunningServer {
  readonly app: NestFastifyApplication;
  readonly httpPort: number;
  readonly httpsPort?: number;
  /** How long `close` may take before the process gives up on it (SHUTDOWN_TIMEOUT_MS). */
  readonly shutdownTimeoutMs: number;
  /**
   * Drains, then releases everything: new requests are refused with 503 (nothing done),
   * requests in flight get their real answers, open streams end with a 503 end-of-stream
   * the SDKs reconnect on, then the listeners, the app and the stores close.
   */
  close(): Promise<void>;
}

/** What a request that arrives while the server drains hears: it was not handled. */
const REFUSED_WHILE_DRAINING = new DomainError(
  'unavailable',
  'shutting_down',
  'This server is shutting down: the request was not handled and nothing was changed; send it again',
);
/** How open streams end on a drain: a 503, which the SDKs retry (resuming from their last event). */
const ENDED_BY_DRAIN = new DomainError('unavailable', 'shutting_down', 'This server is shutting down: subscribe again');

const isHealthRoute = (url: string) => url === '/health' || /^\/health[/?]/.test(url);

/** An error raised outside a route's own handling, answered in its service's shape (Beams' on the Beams APIs). */
const answerInServiceShape = (url: string, error: DomainError) => beamsErrorFor(url, error) ?? toErrorResponse(error, url);

/**
 * The HTTP side of a drain. Once `begin()` runs, a request that arrives is refused with 503
 * (health checks still answer, and say 503 'stopping'), every response asks its client to
 * close the connection, and the returned promise resolves when every request that arrived
 * before has been answered (or its client has gone). Streams count until they end.
 */
class RequestDrain {
  private inFlight = 0;
  private draining = false;
  private settled: (() => void) | null = null;

  constructor(fastify: FastifyInstance) {
    fastify.addHook('onRequest', (request, reply, done) => {
      if (!this.draining) {
        this.inFlight++;
        reply.raw.once('close', () => {
          if (--this.inFlight === 0) this.settled?.();
        });
        return done();
      }
      void reply.header('connection', 'close');
      if (isHealthRoute(request.url)) return done();
      const { status, body } = answerInServiceShape(request.url, REFUSED_WHILE_DRAINING);
      void reply.status(status).send(body);
    });
    fastify.addHook('onSend', (_request, reply, payload, done) => {
      if (this.draining) void reply.header('connection', 'close');
      done(null, payload);
    });
  }

  /** Whether a request is being answered now. */
  get busy(): boolean {
    return this.inFlight > 0;
  }

  begin(): Promise<void> {
    this.draining = true;
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => (this.settled = resolve));
  }
}

/** The Nest application, with what a drain needs: its requests in flight and its HTTP streams. */
interface BuiltApp {
  readonly app: NestFastifyApplication;
  readonly requests: RequestDrain;
  /** Bodies of refused requests still being read so that their clients can read the answer. */
  readonly unreadBodies: UnreadBodies;
  readonly streams: OpenStreams;
}

/**
 * A request must arrive whole within `ms` (408 otherwise). Node looks for late requests every
 * 30 s by default: a quarter of the timeout is looked at as often, so a short one holds too.
 */
function requestTimeoutOptions(ms: number) {
  return { requestTimeout: ms, http: { requestTimeout: ms, connectionsCheckingInterval: Math.min(30_000, Math.ceil(ms / 4)) } };
}

/** Builds the Nest application on Fastify with the wire quirks the SDKs need. */
async function createApp(runtime: Runtime): Promise<BuiltApp> {
  // Connections are never cut under a request: `close` drains them (see RunningServer).
  const adapter = new FastifyAdapter({
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    ...requestTimeoutOptions(runtime.config.requestTimeoutMs),
    // The client address the per-address limits and caps count (TRUST_PROXY: what these proxies forward).
    trustProxy: trustedProxies(runtime.config.trustProxy),
    ...frameworkErrorOptions,
    ...requestIdOptions,
    ...lazySchemaCompilers,
  });
  const fastify = adapter.getInstance();
  registerRequestId(fastify);
  registerAccessLog(fastify, runtime.logger);
  const unreadBodies = registerUnreadBodyDrain(fastify);
  const requests = new RequestDrain(fastify);
  // Idempotency-Key: a keyed write's answer is stored as it is sent (docs/idempotency.md).
  storeKeyedAnswers(fastify);
  // The Pusher SDKs and feeds clients open streams with the custom verb SUBSCRIBE.
  fastify.addHttpMethod('SUBSCRIBE');
  registerLenientJsonParser(fastify);
  rejectUnknownChatVersions(fastify);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRuntime(runtime), adapter, {
    logger: new PinoNestLogger(runtime.logger),
    bodyParser: false,
  });
  // The operator console (CONSOLE_ENABLED): its own routes under /console, nothing on the others.
  registerConsolePage(fastify, runtime.config);
  // Browser apps on other origins (CORS_ORIGINS): @fastify/cors, whose hook Nest runs first, so
  // preflights and every answer (errors, the drain's 503) carry its headers.
  const cors = corsOptions(runtime.config.corsOrigins);
  if (cors) app.enableCors(cors);
  registerRateLimits(fastify, runtime.config.rateLimits, runtime.stores.rateCounters, app.get(AccessTokenVerifier), runtime.logger, answerInServiceShape);
  const streams = registerHttpSubscribe(fastify, app.get(SubscriptionRoutes), runtime.config.keepAliveMs);
  // The demo chat at /demo, only while it is on: otherwise no route of it exists.
  registerDemoPage(fastify, runtime.config);
  app.useGlobalFilters(new ErrorFilter());
  app.useGlobalPipes(new RequestValidationPipe(runtime.config.customDataMaxBytes));
  app.get(OpenApiDocument).describe(app);
  // No app.enableShutdownHooks(): Nest would close the modules on SIGTERM under the requests
  // still in flight. The process's signal handler calls RunningServer.close, which drains first.
  return { app, requests, unreadBodies, streams };
}

/**
 * Stops listening and closes the connections left, once no request admitted before the drain
 * is in flight: what remains is idle, or carries a request that arrived during the drain
 * (refused, nothing done), or a half-sent one the server never took.
 */
function stopListening(server: HttpServer | HttpsServer): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return closed;
}

/** Creates the instance and key named by INSTANCE_LOCATOR / INSTANCE_KEY if they are absent. */
export async function bootstrapInstance(app: NestFastifyApplication, runtime: Runtime): Promise<void> {
  const bootstrap = runtime.config.bootstrap;
  if (!bootstrap) return;
  const commands = app.get(CommandBus);
  const actor = { key_id: 'bootstrap' };
  // Saved is enough to start: an API process may start before its projector workers fold.
  const saved = (command: object) =>
    commands.execute(command).catch((error: unknown) => {
      if (!(error instanceof DomainError && error.reason === 'projection_lag')) throw error;
      runtime.logger.warn('bootstrap change saved; the projector workers have not folded it yet');
    });
  await saved(new CreateInstanceCommand(bootstrap.instanceId, bootstrap.cluster, actor));
  if (bootstrap.keyId && bootstrap.keySecret) {
    await saved(new CreateKeyCommand(bootstrap.instanceId, bootstrap.keyId, bootstrap.keySecret, actor, true));
  }
  if (bootstrap.tokenProviderEnabled) {
    await saved(new SetTokenProviderCommand(bootstrap.instanceId, true, actor));
  }
}

/** Starts the HTTP listener and, when configured, an HTTPS listener serving the same app. */
export async function startServer(runtime: Runtime, hooks: { beforeListen?: () => Promise<void> } = {}): Promise<RunningServer> {
  const { app, requests, unreadBodies, streams } = await createApp(runtime);
  await app.init();
  await bootstrapInstance(app, runtime);
  for (const warning of await app.get(CredentialWarnings).atStart()) runtime.logger.warn(warning);
  const { config } = runtime;
  const trust = trustedProxies(config.trustProxy);
  const bridge = new WebSocketBridge(app.get(SubscriptionRoutes), {
    accessLog: new WebSocketAccessLog(runtime.logger),
    clientAddress: (request) => clientAddressOf(request, trust),
  });
  // A page on an origin CORS_ORIGINS does not allow may not open /ws either.
  const originAllowed = (request: IncomingMessage) => upgradeOriginAllowed(config.corsOrigins, request);
  bridge.attach(app.getHttpServer(), originAllowed);
  await hooks.beforeListen?.(); // frees the port the start-up listener held (startup-listener.ts)
  await app.listen(config.port, config.host);
  const httpPort = (app.getHttpServer().address() as AddressInfo).port;
  let https: HttpsServer | undefined;
  let httpsPort: number | undefined;
  if (config.httpsPort !== undefined) {
    const fastify = app.getHttpAdapter().getInstance();
    https = createHttpsServer(
      { cert: readFileSync(config.tlsCertFile!), key: readFileSync(config.tlsKeyFile!), ...requestTimeoutOptions(config.requestTimeoutMs).http },
      (req, res) => fastify.routing(req, res),
    );
    await new Promise<void>((resolve, reject) => {
      https!.once('error', reject);
      https!.listen(config.httpsPort, config.host, () => resolve());
    });
    https.on('clientError', frameworkErrorOptions.clientErrorHandler!);
    bridge.attach(https, originAllowed);
    httpsPort = (https.address() as AddressInfo).port;
  }
  const readiness = app.get(Readiness);
  runtime.logger.info({ httpPort, httpsPort }, 'Parley is listening');
  // From here /health computes readiness (projections caught up, live log, storage) on every call.
  readiness.state = 'serving';
  collectStartUpGarbage({ busy: () => requests.busy });
  // The embedded server delivers webhooks itself; beside projector workers, they do.
  const webhookDelivery =
    runtime.mode === 'embedded'
      ? startEmbeddedWebhookDelivery(runtime, { contextAt: app.get<WebhookContextAt>(WEBHOOK_CONTEXT_AT), presence: app.get(PresenceTracker), origin: app.get(PublicOrigin).fallback() })
      : null;
  let closing: Promise<void> | null = null;
  const drainAndClose = async () => {
    readiness.state = 'stopping';
    runtime.logger.info('draining: refusing new requests, ending open streams, answering the requests in flight');
    const answered = requests.begin();
    // A refused request waiting for the rest of its body is answered now, not when the body has come.
    unreadBodies.stopWaiting();
    // Before the streams end: their users reconnect at once, so watchers here hear no "offline" for them.
    const presenceStopped = app.get(PresenceTracker).stop();
    streams.endAll(ENDED_BY_DRAIN);
    bridge.endAll(ENDED_BY_DRAIN);
    await Promise.all([answered, presenceStopped, webhookDelivery?.stop()]);
    const listeners = [app.getHttpServer() as HttpServer, ...(https ? [https] : [])].map(stopListening);
    // Sockets close only now: a client reconnects at once, and should find the port closed.
    await bridge.close();
    await Promise.all(listeners);
    await app.close();
    await runtime.close();
    runtime.logger.info('drained: every request in flight was answered and the stores are closed');
  };
  return {
    app,
    httpPort,
    httpsPort,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    close: () => (closing ??= drainAndClose()),
  };
}

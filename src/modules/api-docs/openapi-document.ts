import { Inject, INestApplication, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { OpenAPIObject, OperationObject, ParameterObject, PathItemObject } from '@nestjs/swagger';
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { servedByV5 } from '../../shared/http/chatkit-route';
import { CONFIG, ParleyConfig } from '../../config/config';
import { QUERY_PARAMETERS } from './query-parameters';
import { EXTRA_MODELS, REQUEST_BODIES } from './request-bodies';
import { serviceOf, SERVICES } from './services';
import { UNSEEN_ROUTES, UnseenMethod } from './unseen-routes';
import { applyDeferredApiDocs, swaggerLibrary } from './swagger-library';
import { describeValidatedClasses } from './validator-properties';

/** A route as Fastify registered it: an upper-case method and a `:param` URL. */
export interface RegisteredRoute {
  readonly method: string;
  readonly url: string;
}

/** Where the document is served. */
export const OPENAPI_ROUTE = 'openapi.json';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** OpenAPI 3.0 has no field for custom verbs: SUBSCRIBE operations go under this path item extension. */
export const SUBSCRIBE_OPERATION = 'x-subscribe';

const DESCRIPTION = [
  'Every HTTP route a Parley server serves: the Chatkit services (chat v2 and v6, cursors, presence, authorizer, files, token providers, scheduler), the audit API, Pusher Feeds, Pusher Beams, health and metrics.',
  'Errors are JSON `{error: "<category>/<reason>", error_description}` (Beams routes: `{error, description}`).',
  `Streams are opened with the HTTP verb SUBSCRIBE, which OpenAPI 3.0 cannot name: those operations are listed under the path item extension \`${SUBSCRIBE_OPERATION}\`, and every one of them is also served over the WebSocket at /ws.`,
  'Routes that answer GET also answer HEAD.',
].join('\n\n');

/** The version in the nearest package.json above this file (src/ and dist/ alike). */
function packageVersion(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    try {
      return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      if (dirname(dir) === dir) return 'unknown';
    }
  }
}

/** The operations of a path item, by lower-case verb (`subscribe` for the extension). */
export function operationsOf(item: PathItemObject): [string, OperationObject][] {
  const found: [string, OperationObject][] = HTTP_METHODS.filter((method) => item[method]).map((method) => [method, item[method]!]);
  const subscribe = (item as Record<string, unknown>)[SUBSCRIBE_OPERATION] as OperationObject | undefined;
  if (subscribe) found.push(['subscribe', subscribe]);
  return found;
}

/**
 * The OpenAPI 3 document of every route: Nest's controllers as @nestjs/swagger scans them,
 * plus the routes it cannot see (UNSEEN_ROUTES), each tagged and secured by its service.
 * Built at the first `get()` (the first GET /openapi.json), not at start: the scan and the
 * library it needs (swagger-library.ts) cost an idle server's memory and its start time.
 */
@Injectable()
export class OpenApiDocument {
  private readonly registered: RegisteredRoute[] = [];
  private app: INestApplication | null = null;
  private document: OpenAPIObject | null = null;

  constructor(adapterHost: HttpAdapterHost, @Inject(CONFIG) private readonly config: Pick<ParleyConfig, 'consoleEnabled'>) {
    // Providers are built before any route is registered, so this hears every one of them.
    const fastify = adapterHost.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (typeof fastify?.addHook !== 'function') return; // an application context (the CLIs): no HTTP
    fastify.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) this.registered.push({ method: method.toUpperCase(), url: route.url });
    });
  }

  /** Every route registered with Fastify, to check the document against (the OpenAPI route test). */
  get registeredRoutes(): readonly RegisteredRoute[] {
    return this.registered;
  }

  /** The application the document describes, once its modules exist (startServer, before it listens). */
  describe(app: INestApplication): void {
    this.app = app;
  }

  get(): OpenAPIObject {
    if (!this.app) throw new Error('The OpenAPI document describes the application startServer gives it before the server listens');
    return (this.document ??= this.build(this.app));
  }

  private build(app: INestApplication): OpenAPIObject {
    const { DocumentBuilder, SwaggerModule } = swaggerLibrary();
    const builder = new DocumentBuilder()
      .setTitle('Parley')
      .setDescription(DESCRIPTION)
      .setVersion(packageVersion())
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "An access token signed with one of the instance's keys (HS256), as chatkit-server or the token provider issue them; `su: true` for admin calls." }, 'accessToken')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: "The instance key's secret, as Beams server SDKs send it." }, 'beamsSecretKey')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A Beams token from the Beams token provider.' }, 'beamsToken')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The METRICS_TOKEN of the deployment.' }, 'metricsToken')
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A deployment token (docs/console.md): HS256 with CONSOLE_ADMIN_SECRET, `{iss: "parley_console", sub: <console user>, iat, exp}`, living at most an hour.',
        },
        'operatorToken',
      );
    for (const service of SERVICES) builder.addTag(service.tag, service.description);
    applyDeferredApiDocs();
    describeValidatedClasses();
    const document = SwaggerModule.createDocument(app, builder.build(), {
      autoTagControllers: false,
      extraModels: EXTRA_MODELS,
      operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}`,
    });
    for (const route of UNSEEN_ROUTES) {
      if (route.consoleOnly && !this.config.consoleEnabled) continue;
      addUnseen(document, route.method, route.path, route.operation);
    }
    document.components = { ...document.components, schemas: { ...document.components?.schemas, ...ERROR_SCHEMAS }, responses: ERROR_RESPONSES };
    for (const [path, item] of Object.entries(document.paths)) {
      const service = serviceOf(path);
      for (const [method, operation] of operationsOf(item)) {
        if (service) operation.tags = [service.tag];
        operation.security ??= service?.security;
        operation.requestBody ??= operation.operationId ? REQUEST_BODIES[operation.operationId] : undefined;
        const queryParameters = (operation.operationId && QUERY_PARAMETERS[operation.operationId]) || [];
        operation.parameters = [
          ...withPathParameters(method, path, operation.parameters as ParameterObject[] | undefined),
          ...queryParameters,
          ...(takesIdempotencyKey(method, path) ? [IDEMPOTENCY_KEY_PARAMETER] : []),
        ];
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          if (response && 'description' in response && !response.description) response.description = STATUS_TEXT[status] ?? 'Done';
        }
        operation.responses = { ...operation.responses, default: { $ref: `#/components/responses/${service?.beamsErrors ? 'BeamsError' : 'Error'}` } };
      }
    }
    withoutUnusedSchemes(document);
    return document;
  }
}

/** Declares only the credentials some operation takes (the operator token only while CONSOLE_ENABLED serves its routes). */
function withoutUnusedSchemes(document: OpenAPIObject): void {
  const used = new Set(
    Object.values(document.paths).flatMap((item) => operationsOf(item).flatMap(([, operation]) => (operation.security ?? []).flatMap((requirement) => Object.keys(requirement)))),
  );
  const schemes = document.components?.securitySchemes ?? {};
  for (const name of Object.keys(schemes)) if (!used.has(name)) delete schemes[name];
}

function addUnseen(document: OpenAPIObject, method: UnseenMethod, path: string, operation: Partial<OperationObject>): void {
  const item = (document.paths[path] ??= {}) as Record<string, unknown>;
  const field = method === 'subscribe' ? SUBSCRIBE_OPERATION : method;
  if (item[field]) throw new Error(`${method.toUpperCase()} ${path} is documented twice: by a controller and by UNSEEN_ROUTES`);
  item[field] = { responses: {}, ...operation };
}

/** docs/idempotency.md: every write but the Beams device API and the token providers (which change nothing), and the operator API's. */
const takesIdempotencyKey = (method: string, path: string): boolean =>
  ['post', 'put', 'patch', 'delete'].includes(method) && !/^\/device_api\/|_token_provider\/|^\/services\/parley_operator\//.test(path);

const IDEMPOTENCY_KEY_PARAMETER: ParameterObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
  description:
    'Makes the write safe to retry (docs/idempotency.md): a retry with the same key and request is answered as the first attempt ' +
    '(`Idempotent-Replayed: true`) without a second change; the same key with another request 422; while the first runs 409 with Retry-After.',
};

/** Every `{param}` of the path declared once, as the scanner sometimes leaves some out. */
function withPathParameters(method: string, path: string, parameters: ParameterObject[] = []): ParameterObject[] {
  const declared = new Set(parameters.filter((p) => p.in === 'path').map((p) => p.name));
  const missing = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]!).filter((name) => !declared.has(name));
  const v5 = servedByV5(method.toUpperCase(), path.replace(/\{([^}]+)\}/g, ':$1'));
  const version = (name: string) =>
    name !== 'version'
      ? {}
      : v5
        ? { enum: ['v2', 'v5', 'v6'], description: 'The Chatkit API version: they serve the same data (v5 only this route, for chatkit-client\'s own tests)' }
        : { enum: ['v2', 'v6'], description: 'The Chatkit API version: both serve the same data' };
  return [
    ...missing.map((name): ParameterObject => {
      const { description, ...schema } = version(name) as { description?: string; enum?: string[] };
      return { name, in: 'path', required: true, schema: { type: 'string', ...schema }, ...(description && { description }) };
    }),
    ...parameters,
  ];
}

/** What an answer without a description of its own says. */
const STATUS_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '204': 'Done: no content' };

const ERROR_SCHEMAS = {
  Error: {
    type: 'object',
    required: ['error', 'error_description'],
    properties: {
      error: { type: 'string', description: '`<category>/<reason>`, e.g. `services/chatkit/not_found/room_not_found`' },
      error_description: { type: 'string' },
      error_uri: { type: 'string' },
    },
  },
  BeamsError: { type: 'object', required: ['error', 'description'], properties: { error: { type: 'string' }, description: { type: 'string' } } },
};

const ERROR_RESPONSES = {
  Error: { description: 'An error: 4xx for a request that cannot be served as sent, 5xx saying whether the change was stored', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  BeamsError: { description: 'A Beams error', content: { 'application/json': { schema: { $ref: '#/components/schemas/BeamsError' } } } },
};

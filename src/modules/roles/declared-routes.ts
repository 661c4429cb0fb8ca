import { Injectable, OnApplicationBootstrap, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, HttpAdapterHost, MetadataScanner } from '@nestjs/core';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { AccessTokenVerifier } from '../instances/authentication/access-token';
import { OperatorTokenVerifier } from '../instances/authentication/operator-token';
import { AuthenticatedRequest } from '../instances/authentication/access-token.guard';
import { AccessCheck, RouteParams } from './access-check';
import { Access, AccessRule, isAccessRule, needsAccessToken } from './access-rules';
import { ACCESS_RULE, RouteAccessConfig } from './requires.decorator';

declare module 'fastify' {
  // What a route declares (RouteAccessConfig), typed where routes are registered.
  interface FastifyContextConfig {
    access?: AccessRule;
    accessCheckedByGuard?: boolean;
  }
}

/** A route as the HTTP server registered it, with what it declares (undefined: nothing). */
export interface DeclaredRoute {
  readonly method: string;
  readonly url: string;
  readonly access?: AccessRule;
}

/** A controller method that serves a route, with its `@Requires` rule (undefined: none). */
export interface ControllerRoute {
  readonly handler: string;
  readonly method: string;
  readonly path: string;
  readonly access?: AccessRule;
}

/** Routes that plugins add, not this application: CORS preflights, answered by @fastify/cors with headers only. */
const PLUGIN_ROUTES = new Map<string, AccessRule>([['OPTIONS *', Access.public]]);

const joinPath = (...parts: string[]) => `/${parts.flatMap((p) => p.split('/')).filter(Boolean).join('/')}`;

/** Every route method of every controller the application holds, by Nest's own metadata. */
export function controllerRoutes(discovery: DiscoveryService, scanner: MetadataScanner): ControllerRoute[] {
  const found: ControllerRoute[] = [];
  for (const wrapper of discovery.getControllers()) {
    const type = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
    if (!type) continue;
    const base = [Reflect.getMetadata(PATH_METADATA, type) ?? ''].flat() as string[];
    for (const name of scanner.getAllMethodNames(type.prototype)) {
      const method = type.prototype[name];
      const path = Reflect.getMetadata(PATH_METADATA, method) as string | string[] | undefined;
      if (path === undefined) continue;
      const verb = RequestMethod[Reflect.getMetadata(METHOD_METADATA, method) as RequestMethod] ?? 'GET';
      const rule = Reflect.getMetadata(ACCESS_RULE, method) as unknown;
      for (const prefix of base) {
        for (const own of [path].flat()) {
          found.push({ handler: `${type.name}.${name}`, method: verb, path: joinPath(prefix, own), access: isAccessRule(rule) ? rule : undefined });
        }
      }
    }
  }
  return found;
}

/** Stops the start: the routes named declare nothing, so they would serve no one. */
export class UndeclaredAccessError extends Error {
  constructor(routes: readonly string[]) {
    super(
      `These routes declare no access requirement: ${routes.join('; ')}. Declare one with @Requires(Access.…) on the ` +
        'controller method, config: { access: Access.… } on a Fastify route, or the rule argument of SubscriptionRoutes.register ' +
        "(docs/architecture.md, 'Declaring what a route requires')",
    );
    this.name = 'UndeclaredAccessError';
  }
}

/**
 * Every route the HTTP server registers, with what it declares; the start fails while one
 * declares nothing. Controller methods are checked once Nest has registered them (naming the
 * method), every Fastify route once the server is ready (raw routes: Beams, attachment
 * transfer, the SUBSCRIBE catch-all). A raw route whose rule needs a token gets the check as a
 * preHandler: its handler finds the verified caller on `request.actor` (the operator rule's on
 * `request.operator`).
 */
@Injectable()
export class DeclaredRoutes implements OnApplicationBootstrap {
  private readonly table: DeclaredRoute[] = [];

  constructor(
    adapterHost: HttpAdapterHost,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly verifier: AccessTokenVerifier,
    private readonly check: AccessCheck,
    private readonly operators: OperatorTokenVerifier,
  ) {
    // Providers are built before any route is registered, so these hear every one of them.
    const fastify = adapterHost.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (typeof fastify?.addHook !== 'function') return; // an application context (the CLIs): no HTTP
    fastify.addHook('onRoute', (route) => this.declare(route));
    fastify.addHook('onReady', async () => {
      const undeclared = this.table.filter((route) => !route.access).map((route) => `${route.method} ${route.url}`);
      if (undeclared.length > 0) throw new UndeclaredAccessError(undeclared);
    });
  }

  onApplicationBootstrap(): void {
    const undeclared = this.controllerRoutes().filter((route) => !route.access);
    if (undeclared.length > 0) throw new UndeclaredAccessError(undeclared.map((r) => `${r.method} ${r.path} (${r.handler})`));
  }

  /** Every route registered with the HTTP server so far. */
  get routes(): readonly DeclaredRoute[] {
    return this.table;
  }

  controllerRoutes(): ControllerRoute[] {
    return controllerRoutes(this.discovery, this.scanner);
  }

  private declare(route: RouteOptions): void {
    const config = route.config as RouteAccessConfig | undefined;
    const methods = [route.method].flat();
    for (const method of methods) {
      const access = isAccessRule(config?.access) ? config.access : PLUGIN_ROUTES.get(`${method} ${route.url}`);
      this.table.push({ method, url: route.url, ...(access && { access }) });
    }
    const rule = config?.access;
    if (!isAccessRule(rule) || config?.accessCheckedByGuard) return;
    const check = rule.kind === 'operator' ? this.operatorBeforeHandler() : needsAccessToken(rule) ? this.checkBeforeHandler(rule) : null;
    if (check) route.preHandler = [check, ...[route.preHandler ?? []].flat()] as RouteOptions['preHandler'];
  }

  private operatorBeforeHandler() {
    return async (request: FastifyRequest): Promise<void> => {
      (request as AuthenticatedRequest).operator = this.operators.verify(request.headers.authorization);
    };
  }

  private checkBeforeHandler(rule: AccessRule) {
    return async (request: FastifyRequest): Promise<void> => {
      const params = request.params as RouteParams;
      const actor = await this.verifier.verify(request.headers.authorization, params.instanceId ?? '');
      await this.check.authorize(rule, actor, params, { method: request.method, route: request.routeOptions.url ?? '' });
      (request as AuthenticatedRequest).actor = actor;
    };
  }
}

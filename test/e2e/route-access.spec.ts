/**
 * Every route declares what it requires at the route (issue 17, item 6): the enumeration of
 * every controller route, every Fastify route and every subscription route of a real server,
 * the start refused when one declares nothing, the guard refusing an undeclared route, and
 * the declarations themselves tried as attacks with a plain `default`-role token.
 */
import { Controller, Get, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, HttpAdapterHost, MetadataScanner, NestFactory, Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppModule } from '../../src/app/app.module';
import { openRuntime, Runtime } from '../../src/app/runtime';
import { loadConfig } from '../../src/config/config';
import { AccessTokenGuard } from '../../src/modules/instances/authentication/access-token.guard';
import { OperatorTokenVerifier } from '../../src/modules/instances/authentication/operator-token';
import { AccessCheck } from '../../src/modules/roles/access-check';
import { AccessGuard } from '../../src/modules/roles/access.guard';
import { AccessRule, describeAccess, isAccessRule } from '../../src/modules/roles/access-rules';
import { DeclaredRoutes } from '../../src/modules/roles/declared-routes';
import { ACCESS_RULE } from '../../src/modules/roles/requires.decorator';
import { SubscriptionRoutes } from '../../src/modules/streaming/subscription-routes';
import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';

/** A route as the attack below calls it: `:version` is v6, `:instanceId` the server's instance, any other parameter `x`. */
const pathOf = (pattern: string, instanceId: string, values: Record<string, string> = {}) =>
  pattern.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => (name === 'version' ? 'v6' : name === 'instanceId' ? instanceId : (values[name] ?? 'x')));

describe('what every route requires, declared at the route', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    for (const id of ['mallory', 'victim']) expect((await s.request('POST', s.chat('/users'), { body: { id, name: id } })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('every controller route, every Fastify route and every subscription route declares a rule', () => {
    const app = s.server.app;
    // Nest's own view of its controllers, apart from the roles module's listing.
    const discovery = app.get(DiscoveryService);
    const scanner = app.get(MetadataScanner);
    const handlers: string[] = [];
    const undeclared: string[] = [];
    for (const wrapper of discovery.getControllers()) {
      const type = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!type) continue;
      for (const name of scanner.getAllMethodNames(type.prototype)) {
        const method = type.prototype[name];
        if (Reflect.getMetadata(PATH_METADATA, method) === undefined || Reflect.getMetadata(METHOD_METADATA, method) === undefined) continue;
        handlers.push(`${type.name}.${name}`);
        if (!isAccessRule(Reflect.getMetadata(ACCESS_RULE, method))) undeclared.push(`${type.name}.${name}`);
      }
    }
    expect(handlers.length).toBeGreaterThan(50);
    expect(undeclared).toEqual([]);

    const routes = app.get(DeclaredRoutes).routes;
    // Every controller method is one of the server's routes (HEAD copies aside), and so is every raw route.
    expect(routes.filter((r) => r.method !== 'HEAD').length).toBeGreaterThanOrEqual(handlers.length + 30);
    expect(routes.filter((r) => !r.access).map((r) => `${r.method} ${r.url}`)).toEqual([]);

    const subscriptions = app.get(SubscriptionRoutes).routes;
    expect(subscriptions.map((r) => r.pattern)).toEqual(
      expect.arrayContaining(['/services/chatkit/:version/:instanceId/rooms/:roomId', '/services/chatkit/:version/:instanceId/users']),
    );
    expect(subscriptions.filter((r) => !isAccessRule(r.requires)).map((r) => r.pattern)).toEqual([]);
  });

  it('a subscription route registered without a rule is refused, naming it', () => {
    const routes = s.server.app.get(SubscriptionRoutes);
    expect(() => routes.register('/services/chatkit/:version/:instanceId/undeclared', undefined as unknown as AccessRule, async () => undefined)).toThrow(
      /SUBSCRIBE \/services\/chatkit\/:version\/:instanceId\/undeclared declares no access/,
    );
    expect(routes.patterns).not.toContain('/services/chatkit/:version/:instanceId/undeclared');
  });

  it('the guard refuses a controller route that declares nothing, even to su', async () => {
    class Undeclared {
      get(): string {
        return 'served';
      }
    }
    const app = s.server.app;
    const guard = new AccessGuard(app.get(Reflector), app.get(AccessTokenGuard), app.get(AccessCheck), app.get(OperatorTokenVerifier));
    const request = { headers: { authorization: `Bearer ${s.token({ su: true })}` }, params: { instanceId: s.instanceId } };
    const context = new ExecutionContextHost([request, {}], Undeclared, Undeclared.prototype.get);
    await expect(guard.canActivate(context)).rejects.toMatchObject({ status: 403, code: 'forbidden/access_undeclared' });
  });

  it('the declarations hold against a plain user token: su routes, other users, and no token', async () => {
    const mallory = s.token({ sub: 'mallory' });
    const tried: string[] = [];
    for (const route of s.server.app.get(DeclaredRoutes).routes) {
      const rule = route.access!;
      if (route.method === 'HEAD' || (rule.kind !== 'su' && rule.kind !== 'self-or-su' && !(rule.kind === 'permission' && rule.self))) continue;
      const self = rule.kind === 'self-or-su' ? rule.user : rule.kind === 'permission' ? rule.self : undefined;
      const path = pathOf(route.url, s.instanceId, self ? { [self]: 'victim' } : {});
      const body = route.method === 'GET' ? undefined : {};
      const anonymous = await s.request(route.method, path, { token: null, body });
      expect([route.method, route.url, anonymous.status]).toEqual([route.method, route.url, 401]);
      const answer = await s.request(route.method, path, { token: mallory, body });
      expect([route.method, route.url, describeAccess(rule), answer.status, answer.body.error.replace(/^.*\/forbidden\//, '')]).toEqual([
        route.method,
        route.url,
        describeAccess(rule),
        403,
        rule.kind === 'su' ? 'su_required' : 'not_allowed',
      ]);
      tried.push(`${route.method} ${route.url}`);
    }
    // The authorizer's eight routes, users, scheduler, audit, wipe and message deletion by id, and the "self" routes.
    expect(tried.length).toBeGreaterThanOrEqual(25);
    expect(tried).toEqual(expect.arrayContaining([`PUT /services/chatkit/:version/:instanceId/users/:userId`, 'DELETE /services/chatkit/:version/:instanceId/resources']));

    for (const { pattern, requires } of s.server.app.get(SubscriptionRoutes).routes) {
      if (!(requires.kind === 'permission' && requires.self)) continue;
      const stream = await openHttpSubscription(s.baseUrl + pathOf(pattern, s.instanceId, { [requires.self]: 'victim' }), { authorization: `Bearer ${mallory}` });
      await stream.close();
      expect([pattern, stream.status, stream.body?.error?.replace(/^.*\/forbidden\//, '')]).toEqual([pattern, 403, 'not_allowed']);
    }
  });
});

describe('a route that declares nothing', () => {
  let dataDir: string;
  let runtime: Runtime;
  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-undeclared-'));
    runtime = await openRuntime(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), 'embedded');
  });
  afterEach(async () => {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('stops the start of the application, naming the controller method', async () => {
    @Controller('services/chatkit/:version/:instanceId')
    class ForgetfulController {
      @Get('forgotten')
      forgotten(): string {
        return 'served to anyone';
      }
    }
    @Module({ imports: [AppModule.forRuntime(runtime)], controllers: [ForgetfulController] })
    class WithForgottenRoute {}
    const app = await NestFactory.create(WithForgottenRoute, new FastifyAdapter(), { logger: false });
    try {
      await expect(app.init()).rejects.toThrow(
        /declare no access requirement: GET \/services\/chatkit\/:version\/:instanceId\/forgotten \(ForgetfulController\.forgotten\)/,
      );
    } finally {
      await app.close().catch(() => undefined);
    }
  });

  it('stops the start of the server when a raw Fastify route declares nothing, naming it', async () => {
    @Injectable()
    class ForgetfulPlugin implements OnModuleInit {
      constructor(private readonly adapterHost: HttpAdapterHost) {}
      onModuleInit(): void {
        const fastify = this.adapterHost.httpAdapter.getInstance() as FastifyInstance;
        void fastify.register(async (scope) => {
          scope.get('/raw/forgotten', async () => 'served to anyone');
        });
      }
    }
    @Module({ imports: [AppModule.forRuntime(runtime)], providers: [ForgetfulPlugin] })
    class WithForgottenPlugin {}
    const app = await NestFactory.create<NestFastifyApplication>(WithForgottenPlugin, new FastifyAdapter(), { logger: false });
    try {
      await app.init();
      await expect(app.listen(0, '127.0.0.1')).rejects.toThrow(/declare no access requirement: GET \/raw\/forgotten/);
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});

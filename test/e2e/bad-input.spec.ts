import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { request as httpRequest } from 'node:http';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { startTestServer, TestServer } from '../support/test-server';

interface Route {
  readonly method: string;
  readonly path: string;
  readonly takesBody: boolean;
}

/** Every HTTP route Nest serves, read from its controllers' metadata (not listed by hand). */
function nestRoutes(s: TestServer): Route[] {
  const routes: Route[] = [];
  for (const module of s.server.app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (!metatype) continue;
      const base: string = Reflect.getMetadata(PATH_METADATA, metatype) ?? '';
      for (const name of Object.getOwnPropertyNames(metatype.prototype)) {
        const handler = metatype.prototype[name];
        const path = name === 'constructor' ? undefined : Reflect.getMetadata(PATH_METADATA, handler);
        if (path === undefined) continue;
        const args: Record<string, unknown> = Reflect.getMetadata(ROUTE_ARGS_METADATA, metatype, name) ?? {};
        routes.push({
          method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod],
          path: `/${[base, path].filter((p) => p && p !== '/').join('/')}`,
          takesBody: Object.keys(args).some((key) => key.split(':')[0] === String(RouteParamtypes.BODY)),
        });
      }
    }
  }
  return routes;
}

const SERVICE_ERROR = /^(services\/[a-z_]+\/)?[a-z_]+\/[a-z_]+$/;

describe('bad input: every route answers 4xx JSON in the service shape and changes nothing', () => {
  let s: TestServer;
  let routes: Route[];
  let messageId: number;
  const log = () => s.server.app.get<EventStore>(EVENT_STORE);

  /** Values that exist, so each route gets past "not found" to its body. */
  const fill = (path: string, version: string, overrides: Record<string, string> = {}) =>
    path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
      if (name in overrides) return overrides[name];
      const values: Record<string, string> = {
        instanceId: s.instanceId,
        version,
        userId: 'ann',
        roomId: 'lobby',
        messageId: String(messageId),
        roleName: 'default',
        scope: 'global',
        fileName: 'notes.txt',
        attachmentId: 'a1',
      };
      return values[name] ?? 'x';
    });

  const versionsOf = (route: Route) => (route.path.includes(':version') ? ['v2', 'v6'] : ['']);

  const expectServiceError = (res: { status: number; headers: Headers; body: any }, what: string) => {
    expect([what, res.status >= 400 && res.status < 500]).toEqual([what, true]);
    expect([what, res.headers.get('content-type')]).toEqual([what, expect.stringMatching(/^application\/json/)]);
    expect([what, res.body?.error]).toEqual([what, expect.stringMatching(SERVICE_ERROR)]);
    expect([what, typeof res.body?.error_description]).toEqual([what, 'string']);
  };

  beforeAll(async () => {
    s = await startTestServer();
    await s.request('POST', s.chat('/batch_users'), { body: { users: [{ id: 'ann', name: 'Ann' }, { id: 'bob', name: 'Bob' }] } });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['bob'] }, token: s.token({ sub: 'ann' }) });
    messageId = (await s.request('POST', s.chat('/rooms/lobby/messages', 'v2'), { body: { text: 'hi' }, token: s.token({ sub: 'ann' }) })).body
      .message_id;
    routes = nestRoutes(s);
  });
  afterAll(() => s.close());

  it('finds the routes from the Nest router', () => {
    expect(routes.filter((r) => r.takesBody).length).toBeGreaterThanOrEqual(10);
    expect(routes).toEqual(expect.arrayContaining([{ method: 'PUT', path: '/services/chatkit/:version/:instanceId/users/:userId', takesBody: true }]));
  });

  it('answers a JSON null, array or scalar body to every body-taking route with 4xx JSON, and appends nothing', async () => {
    const before = await log().headPosition();
    for (const route of routes.filter((r) => r.takesBody)) {
      for (const version of versionsOf(route)) {
        for (const body of ['null', '[]', '[{"id":"x","name":"x"}]', '42', '"text"', 'true']) {
          const res = await s.request(route.method, fill(route.path, version), {
            rawBody: body,
            headers: { 'content-type': 'application/json' },
          });
          expectServiceError(res, `${route.method} ${route.path} ${version} ${body}`);
        }
      }
    }
    expect(await log().headPosition()).toEqual(before);
    expect((await s.request('GET', s.chat('/users/ann'))).body.name).toBe('Ann');
  });

  it('answers path ids far beyond any sane length on every route with 4xx JSON, and appends nothing', async () => {
    const before = await log().headPosition();
    for (const route of routes) {
      for (const name of route.path.match(/:([A-Za-z_]+)/g) ?? []) {
        for (const length of [5_000, 100_000]) {
          const path = fill(route.path, 'v6', { [name.slice(1)]: 'x'.repeat(length) });
          const res = await s.request(route.method, path, route.takesBody ? { body: { name: 'x' } } : {});
          expectServiceError(res, `${route.method} ${route.path} ${name}×${length}`);
        }
      }
    }
    expect(await log().headPosition()).toEqual(before);
  });

  it('serves ids as long as the API allows (160 characters)', async () => {
    const id = 'u'.repeat(160);
    expect((await s.request('POST', s.chat('/users'), { body: { id, name: 'long' } })).status).toBe(201);
    expect((await s.request('GET', s.chat(`/users/${id}`))).body.id).toBe(id);
  });

  it('answers a request Node cannot parse with JSON', async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${s.baseUrl}/health`, { headers: { 'x-big': 'y'.repeat(100_000) } }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toEqual({ error: 'bad_request/headers_too_large', error_description: expect.any(String) });
  });
});

import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { request as httpRequest } from 'node:http';
import { WebSocket } from 'ws';
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

  it('answers a body nested far deeper than any API needs with 4xx JSON on every body-taking route, and appends nothing', async () => {
    const before = await log().headPosition();
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const fields = ['name', 'id', 'users', 'user_ids', 'text', 'parts', 'custom_data', 'position', 'items', 'interests', 'users', 'permissions'];
    const body = `{${fields.map((f) => `"${f}":${deep}`).join(',')}}`;
    for (const route of routes.filter((r) => r.takesBody)) {
      for (const version of versionsOf(route)) {
        const res = await s.request(route.method, fill(route.path, version), { rawBody: body, headers: { 'content-type': 'application/json' } });
        expectServiceError(res, `${route.method} ${route.path} ${version} deep`);
      }
    }
    expect(await log().headPosition()).toEqual(before);
  });

  it('refuses a lone surrogate anywhere in a JSON body with 400 (the SQLite read models would store it as U+FFFD), and appends nothing', async () => {
    const before = await log().headPosition();
    for (const users of ['[{"id":"a\\ud800","name":"x"}]', '[{"id":"x1","name":"\\udfffx"}]', '[{"id":"x2","name":"x","custom_data":{"\\ud800":1}}]']) {
      const res = await s.request('POST', s.chat('/batch_users'), { rawBody: `{"users":${users}}`, headers: { 'content-type': 'application/json' } });
      expectServiceError(res, users);
      expect([users, res.status, res.body.error]).toEqual([users, 400, 'services/chatkit/bad_request/invalid_json_body']);
    }
    expect(await log().headPosition()).toEqual(before);
    const paired = await s.request('POST', s.chat('/users'), { rawBody: '{"id":"emoji","name":"\\ud83d\\ude00"}', headers: { 'content-type': 'application/json' } });
    expect([paired.status, paired.body.name]).toEqual([201, '\u{1F600}']);
  });

  it('answers a batch_users entry that is an array, not a user, with 422, and appends nothing', async () => {
    const before = await log().headPosition();
    for (const users of [[[]], [[{ id: 'x', name: 'x' }]], [{ id: 'y', name: 'y' }, []]]) {
      const res = await s.request('POST', s.chat('/batch_users'), { body: { users } });
      expectServiceError(res, JSON.stringify(users));
      expect(res.status).toBe(422);
    }
    expect(await log().headPosition()).toEqual(before);
  });

  it('answers a v6 message part whose content or url is null with 422, and appends nothing', async () => {
    const before = await log().headPosition();
    for (const parts of [[{ type: 'text/plain', content: null }], [{ type: 'image/png', url: null }], [{ type: 'text/plain', content: 'hi' }, { type: 'image/png', url: null }]]) {
      const res = await s.request('POST', s.chat('/rooms/lobby/messages'), { body: { parts }, token: s.token({ sub: 'ann' }) });
      expectServiceError(res, JSON.stringify(parts));
      expect([JSON.stringify(parts), res.status]).toEqual([JSON.stringify(parts), 422]);
    }
    expect(await log().headPosition()).toEqual(before);
  });

  it('answers Beams publishes nested too deep or holding a lone surrogate with 400 in the Beams shape, and appends nothing', async () => {
    const before = await log().headPosition();
    const deep = '{"a":'.repeat(150) + '1' + '}'.repeat(150);
    for (const [target, body] of [
      ['interests', `{"interests":["news"],"web":${deep}}`],
      ['users', `{"users":["ann"],"web":${deep}}`],
      ['interests', '{"interests":["news"],"web":{"notification":{"title":"\\ud800"}}}'],
    ]) {
      const res = await s.request('POST', `/publish_api/v1/instances/${s.instanceId}/publishes/${target}`, {
        rawBody: body,
        token: s.secret,
        headers: { 'content-type': 'application/json' },
      });
      expect([body.slice(0, 60), res.status, res.body]).toEqual([body.slice(0, 60), 400, { error: expect.any(String), description: expect.any(String) }]);
    }
    expect(await log().headPosition()).toEqual(before);
  });

  it('answers a device API body that is a JSON null, array or scalar with 400 in the Beams shape, and appends nothing', async () => {
    const devices = `/device_api/v1/instances/${s.instanceId}/devices`;
    const registered = await s.request('POST', `${devices}/fcm`, { token: null, body: { token: 'f'.repeat(152), metadata: { sdkVersion: '1.0.0' } } });
    expect(registered.status).toBe(200);
    const id: string = registered.body.id;
    const before = await log().headPosition();
    for (const [method, path] of [['PUT', `${devices}/fcm/${id}/metadata`], ['PUT', `${devices}/fcm/${id}/interests`], ['PUT', `${devices}/fcm/${id}/token`]]) {
      for (const body of ['null', '[]', '42', '"text"']) {
        const res = await s.request(method, path, { token: null, rawBody: body, headers: { 'content-type': 'application/json' } });
        expect([path, body, res.status, res.body]).toEqual([path, body, 400, { error: expect.any(String), description: expect.any(String) }]);
      }
    }
    expect(await log().headPosition()).toEqual(before);
  });

  it('closes a /ws socket that sends a frame ws refuses (too large, not UTF-8) with its close code, and keeps serving others', async () => {
    const closeCodeAfter = (data: Buffer | string, binary: boolean) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${s.baseUrl.replace('http', 'ws')}/ws`);
        ws.on('open', () => ws.send(data, { binary }));
        ws.on('close', (code) => resolve(code));
        ws.on('error', reject);
      });
    expect(await closeCodeAfter('x'.repeat(300 * 1024), false)).toBe(1009); // over maxPayload
    expect(await closeCodeAfter(Buffer.from([0x5b, 0xff, 0xfe, 0x5d]), false)).toBe(1007); // a text frame that is not UTF-8
    const pong = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`${s.baseUrl.replace('http', 'ws')}/ws`);
      ws.on('open', () => ws.send('[16,7,null,null]'));
      ws.on('message', (data) => {
        resolve(String(data));
        ws.close();
      });
      ws.on('error', reject);
    });
    expect(JSON.parse(pong)).toEqual([17, 7]);
  });

  it('answers an OPTIONS request that is no CORS preflight (no Origin or no method asked) without a text/plain error', async () => {
    const requests: Record<string, string>[] = [{}, { origin: 'https://app.example' }, { 'access-control-request-method': 'GET' }];
    for (const headers of requests) {
      const res = await s.request('OPTIONS', s.chat('/users'), { token: null, headers });
      expect([headers, res.status, res.text]).toEqual([headers, 204, '']);
    }
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

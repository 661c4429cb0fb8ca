import Ajv from 'ajv';
import { WebSocket } from 'ws';
import { OpenApiDocument, operationsOf } from '../../src/modules/api-docs/openapi-document';
import { QUERY_PARAMETERS } from '../../src/modules/api-docs/query-parameters';
import { REQUEST_BODIES } from '../../src/modules/api-docs/request-bodies';
import { SubscriptionRoutes } from '../../src/modules/streaming/subscription-routes';
import { startTestServer, TestServer } from '../support/test-server';

/** `:param` (Fastify, find-my-way) → `{param}` (OpenAPI). */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The routes the server answers, as `METHOD /path` in OpenAPI form. */
function servedRoutes(s: TestServer): Set<string> {
  const registered = s.server.app.get(OpenApiDocument).registeredRoutes;
  const served = new Set<string>();
  for (const { method, url } of registered) {
    // Fastify adds HEAD to every GET (the document says so once); CORS answers OPTIONS anywhere.
    if (method === 'HEAD' && registered.some((r) => r.method === 'GET' && r.url === url)) continue;
    if (method === 'OPTIONS') continue;
    // One catch-all SUBSCRIBE hands every stream to the subscription router: its patterns are the routes.
    if (method === 'SUBSCRIBE' && url === '/*') continue;
    served.add(`${method} ${openApiPath(url)}`);
  }
  for (const pattern of s.server.app.get(SubscriptionRoutes).patterns) served.add(`SUBSCRIBE ${openApiPath(pattern)}`);
  return served;
}

function documentedRoutes(document: any): Set<string> {
  const documented = new Set<string>();
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const [method] of operationsOf(item)) documented.add(`${method.toUpperCase()} ${path}`);
  }
  return documented;
}

/**
 * The shape of an OpenAPI 3.0 document, as far as Parley's document uses it: enough to catch a
 * path item with a misspelt verb, an operation without responses, a response without a
 * description or a parameter without its place.
 */
const OPENAPI_SHAPE = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: {
    openapi: { type: 'string', pattern: '^3\\.0\\.\\d+$' },
    info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string' } } },
    tags: { type: 'array', items: { type: 'object', required: ['name'] } },
    paths: {
      type: 'object',
      propertyNames: { pattern: '^/' },
      additionalProperties: {
        type: 'object',
        propertyNames: { pattern: '^(get|put|post|delete|options|head|patch|trace|parameters|summary|description|servers|x-.+)$' },
        patternProperties: { '^(get|put|post|delete|options|head|patch|trace|x-subscribe)$': { $ref: '#/$defs/operation' } },
      },
    },
    components: {
      type: 'object',
      properties: {
        securitySchemes: { type: 'object', additionalProperties: { type: 'object', required: ['type'] } },
        schemas: { type: 'object', additionalProperties: { type: 'object' } },
        responses: { type: 'object', additionalProperties: { $ref: '#/$defs/response' } },
      },
    },
  },
  $defs: {
    operation: {
      type: 'object',
      required: ['responses'],
      properties: {
        operationId: { type: 'string' },
        summary: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        security: { type: 'array', items: { type: 'object', additionalProperties: { type: 'array' } } },
        parameters: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'in'],
            properties: { in: { enum: ['path', 'query', 'header', 'cookie'] } },
            if: { properties: { in: { const: 'path' } } },
            then: { required: ['required'], properties: { required: { const: true } } },
          },
        },
        requestBody: { type: 'object', required: ['content'] },
        responses: {
          type: 'object',
          minProperties: 1,
          propertyNames: { pattern: '^([1-5](\\d\\d|XX)|default)$' },
          additionalProperties: { oneOf: [{ $ref: '#/$defs/response' }, { $ref: '#/$defs/reference' }] },
        },
      },
    },
    response: { type: 'object', required: ['description'], properties: { description: { type: 'string' } }, not: { required: ['$ref'] } },
    reference: { type: 'object', required: ['$ref'], properties: { $ref: { type: 'string' } } },
  },
};

/** Every `$ref` in the document, for resolving against it. */
function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((item) => refsIn(item, found));
  else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') found.push(child);
      else refsIn(child, found);
    }
  }
  return found;
}

describe('OpenAPI document', () => {
  let s: TestServer;
  let document: any;

  beforeAll(async () => {
    s = await startTestServer();
    const response = await s.request('GET', '/openapi.json', { token: null });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    document = response.body;
  }, 60_000);
  afterAll(() => s?.close());

  it('documents every route the server registered, and only those', async () => {
    // /ws is no Fastify route (the bridge takes the HTTP upgrade): it is served if a socket opens.
    const ws = new WebSocket(s.baseUrl.replace(/^http/, 'ws') + '/ws');
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.close();
    const served = servedRoutes(s);
    served.add('GET /ws');
    // Sanity: the listing covers Nest controllers, raw Fastify routes and subscriptions alike.
    for (const route of [
      'GET /services/chatkit/{version}/{instanceId}/rooms/{roomId}',
      'PUT /attachments/upload/{instanceId}/{attachmentId}',
      'POST /publish_api/v1/instances/{instanceId}/publishes/interests',
      'SUBSCRIBE /services/chatkit/{version}/{instanceId}/users',
      'GET /openapi.json',
    ]) {
      expect(served).toContain(route);
    }
    const documented = documentedRoutes(document);
    const undocumented = [...served].filter((route) => !documented.has(route)).sort();
    const notServed = [...documented].filter((route) => !served.has(route)).sort();
    expect({ undocumented, notServed }).toEqual({ undocumented: [], notServed: [] });
  });

  it('has the shape of an OpenAPI 3.0 document, with every reference resolved', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(OPENAPI_SHAPE);
    expect(validate(document) ? [] : validate.errors).toEqual([]);
    const unresolved = refsIn(document).filter((ref) => {
      const target = ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<any>((node, key) => node?.[key], document);
      return !ref.startsWith('#/') || target === undefined;
    });
    expect(unresolved).toEqual([]);
  });

  it('tags, secures and names the parameters of every operation', () => {
    const tags = new Set(document.tags.map((tag: { name: string }) => tag.name));
    const schemes = new Set(Object.keys(document.components.securitySchemes));
    expect(schemes).toEqual(new Set(['accessToken', 'beamsSecretKey', 'beamsToken', 'metricsToken']));
    const faults: string[] = [];
    const operationIds = new Set<string>();
    for (const [path, item] of Object.entries<any>(document.paths)) {
      const pathParameters = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
      for (const [method, operation] of operationsOf(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        if (operation.tags?.length !== 1 || !tags.has(operation.tags[0]!)) faults.push(`${name}: tag ${operation.tags}`);
        if (!Array.isArray(operation.security)) faults.push(`${name}: no security`);
        for (const requirement of operation.security ?? []) {
          for (const scheme of Object.keys(requirement)) if (!schemes.has(scheme)) faults.push(`${name}: scheme ${scheme}`);
        }
        const places = (operation.parameters ?? []).map((p: any) => `${p.in} ${p.name}`);
        if (new Set(places).size !== places.length) faults.push(`${name}: a parameter twice in ${places}`);
        for (const [status, response] of Object.entries<any>(operation.responses)) {
          if (!response.$ref && !response.description) faults.push(`${name}: ${status} without a description`);
        }
        const declared = (operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name).sort();
        if (JSON.stringify(declared) !== JSON.stringify(pathParameters)) faults.push(`${name}: path parameters ${declared}`);
        if (operation.operationId) {
          if (operationIds.has(operation.operationId)) faults.push(`${name}: operationId ${operation.operationId} twice`);
          operationIds.add(operation.operationId);
        }
      }
    }
    expect(faults).toEqual([]);
  });

  it('offers Idempotency-Key on the writes that take it (docs/idempotency.md), not on reads or the Beams device API', () => {
    const takesKey = (method: string, path: string) =>
      (document.paths[path][method].parameters as { name: string; in: string }[]).some((p) => p.name === 'Idempotency-Key' && p.in === 'header');
    expect(takesKey('post', '/services/chatkit/{version}/{instanceId}/rooms/{roomId}/messages')).toBe(true);
    expect(takesKey('post', '/publish_api/v1/instances/{instanceId}/publishes/interests')).toBe(true);
    expect(takesKey('delete', '/services/chatkit_files/v1/{instanceId}/rooms/{roomId}/files/{fileName}')).toBe(true);
    expect(takesKey('get', '/services/chatkit/{version}/{instanceId}/rooms/{roomId}/messages')).toBe(false);
    expect(takesKey('post', '/services/chatkit_files/v1/{instanceId}/rooms/{roomId}/users/{userId}/files/{fileName}')).toBe(true);
    expect(takesKey('post', '/device_api/v1/instances/{instanceId}/devices/web')).toBe(false);
  });

  it('describes the services with their credentials', () => {
    const room = document.paths['/services/chatkit/{version}/{instanceId}/rooms/{roomId}'];
    expect(room.get.tags).toEqual(['Chat']);
    expect(room.get.security).toEqual([{ accessToken: [] }]);
    expect(room.get.parameters.find((p: any) => p.name === 'version').schema.enum).toEqual(['v2', 'v6']);
    // v5 serves one route: the message delete of chatkit-client's own tests.
    const message = document.paths['/services/chatkit/{version}/{instanceId}/rooms/{roomId}/messages/{messageId}'];
    expect(message.delete.parameters.find((p: any) => p.name === 'version').schema.enum).toEqual(['v2', 'v5', 'v6']);
    expect(message.get.parameters.find((p: any) => p.name === 'version').schema.enum).toEqual(['v2', 'v6']);
    expect(room['x-subscribe'].responses['200'].description).toMatch(/frames/);
    expect(document.paths['/publish_api/v1/instances/{instanceId}/publishes/users'].post.security).toEqual([{ beamsSecretKey: [] }, { accessToken: [] }]);
    expect(document.paths['/device_api/v1/instances/{instanceId}/devices/web/{deviceId}/user'].put.security).toEqual([{ beamsToken: [] }]);
    expect(document.paths['/publish_api/v1/instances/{instanceId}/publishes/users'].post.responses.default.$ref).toBe('#/components/responses/BeamsError');
    const beamsTokens = document.paths['/services/chatkit_beams_token_provider/v1/{instanceId}/beams-tokens'].get;
    expect(beamsTokens.responses.default.$ref).toBe('#/components/responses/Error');
    expect(document.paths['/health'].get.security).toEqual([]);
    expect(document.paths['/metrics'].get.security).toEqual([{ metricsToken: [] }]);
    expect(document.paths['/openapi.json'].get.tags).toEqual(['API documentation']);
  });

  it('describes request bodies from the DTOs, and by hand where a controller reads its body untyped', () => {
    const users = document.paths['/services/chatkit/{version}/{instanceId}/batch_users'].post.requestBody.content['application/json'].schema;
    expect(users.$ref).toBe('#/components/schemas/CreateUsersDto');
    expect(document.components.schemas.CreateUsersDto.properties.users).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/NewUserDto' } });
    const newUser = document.components.schemas.NewUserDto;
    expect(newUser.required).toEqual(['id', 'name']);
    expect(newUser.properties).toMatchObject({ id: { type: 'string', minLength: 1 }, name: { type: 'string' }, custom_data: { type: 'object' } });
    const v6Message = document.components.schemas.V6MessageBodyDto.properties.parts;
    expect(v6Message).toMatchObject({ type: 'array', minItems: 1, items: { $ref: '#/components/schemas/MessagePartDto' } });
    // Every hand-written body lands on an operation that exists.
    const operationIds = new Set(
      Object.values<any>(document.paths).flatMap((item) => operationsOf(item).map(([, operation]) => operation.operationId)),
    );
    expect(Object.keys(REQUEST_BODIES).filter((id) => !operationIds.has(id))).toEqual([]);
    expect(Object.keys(QUERY_PARAMETERS).filter((id) => !operationIds.has(id))).toEqual([]);
    const fetch = document.paths['/services/chatkit/{version}/{instanceId}/rooms/{roomId}/messages'].get;
    expect(fetch.parameters.filter((p: any) => p.in === 'query').map((p: any) => p.name)).toEqual(['initial_id', 'direction', 'limit']);
    const send = document.paths['/services/chatkit/{version}/{instanceId}/rooms/{roomId}/messages'].post;
    expect(send.requestBody).toEqual(REQUEST_BODIES.SendMessage_send);
    // Room names by version: v6 free text up to 60 characters, v2 the seed's charset.
    const createRoom = document.paths['/services/chatkit/{version}/{instanceId}/rooms'].post.requestBody;
    expect(createRoom).toEqual(REQUEST_BODIES.CreateRoom_create);
    const { CreateRoomDto, V2CreateRoomDto, RoomFieldsDto, V2RoomFieldsDto } = document.components.schemas;
    for (const v6 of [CreateRoomDto, RoomFieldsDto]) expect(v6.properties.name).toEqual({ type: 'string', maxLength: 60 });
    for (const v2 of [V2CreateRoomDto, V2RoomFieldsDto]) expect(v2.properties.name).toMatchObject({ pattern: '^[a-z0-9_-]{1,40}$' });
    expect(V2CreateRoomDto.properties.user_ids).toEqual(CreateRoomDto.properties.user_ids);
  });
});

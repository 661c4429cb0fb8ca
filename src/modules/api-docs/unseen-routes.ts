import type { OperationObject, ParameterObject, RequestBodyObject, SchemaObject } from '@nestjs/swagger';
import { BEAMS_TOKEN } from './services';

/**
 * The verbs of routes Nest's scanner cannot see. `subscribe` is the HTTP verb the Pusher SDKs
 * open streams with; OpenAPI 3.0 has no field for custom verbs, so the document lists those
 * operations under the path item extension `x-subscribe`.
 */
export type UnseenMethod = 'get' | 'put' | 'post' | 'delete' | 'subscribe';

export interface UnseenRoute {
  readonly method: UnseenMethod;
  /** OpenAPI form: `{param}` segments. */
  readonly path: string;
  readonly operation: Partial<OperationObject> & { summary: string };
  /** A route of the operator API: served (and documented) only while CONSOLE_ENABLED=true. */
  readonly consoleOnly?: true;
}

const json = (schema: SchemaObject, required = true): RequestBodyObject => ({ required, content: { 'application/json': { schema } } });
const stringArray: SchemaObject = { type: 'array', items: { type: 'string' } };
const emptyObject = { description: 'Done', content: { 'application/json': { schema: { type: 'object' } } } };
const publishBody = (target: 'interests' | 'users'): RequestBodyObject =>
  json({
    type: 'object',
    required: [target],
    properties: {
      [target]: stringArray,
      web: { type: 'object', description: 'The Web Push notification' },
      apns: { type: 'object', description: 'The APNs payload' },
      fcm: { type: 'object', description: 'The FCM message' },
      webhookUrl: { type: 'string', format: 'uri' },
    },
  });
const published = { description: 'Accepted for delivery', content: { 'application/json': { schema: { type: 'object', properties: { publishId: { type: 'string' } } } } } };

/**
 * The stream every subscription answers: status 200, then one JSON array per line:
 * `[0, padding]` keep-alive, `[1, id, headers, body]` event, `[255, status, headers, body]` end.
 */
const stream = {
  description: 'The stream: newline-terminated JSON frames `[0, padding]` (keep-alive), `[1, id, headers, body]` (event), `[255, status, headers, body]` (end of stream)',
  content: { 'application/json': { schema: { type: 'array' } } },
};
const subscription = (summary: string, query: ParameterObject[] = []): UnseenRoute['operation'] => ({
  summary,
  parameters: [{ name: 'Last-Event-Id', in: 'header', required: false, schema: { type: 'string' }, description: 'Resume after this event' }, ...query],
  responses: { '200': stream },
});
const count = (name: string, description: string): ParameterObject[] => [{ name, in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description }];

const device = (platform: string): UnseenRoute[] => {
  const devices = `/device_api/v1/instances/{instanceId}/devices/${platform}`;
  const one = `${devices}/{deviceId}`;
  return [
    {
      method: 'post',
      path: devices,
      operation: {
        summary: `Register a ${platform} device`,
        requestBody: json({ type: 'object', properties: { token: { type: 'string' }, bundleIdentifier: { type: 'string' }, metadata: { type: 'object' } } }),
        responses: { '200': { description: 'The device id', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } } } },
      },
    },
    { method: 'delete', path: one, operation: { summary: `Delete a ${platform} device`, responses: { '200': emptyObject } } },
    { method: 'put', path: `${one}/metadata`, operation: { summary: "Update a device's SDK metadata", requestBody: json({ type: 'object' }), responses: { '200': emptyObject } } },
    ...(platform === 'fcm'
      ? [{ method: 'put', path: `${one}/token`, operation: { summary: "Replace an FCM device's token", requestBody: json({ type: 'object', properties: { token: { type: 'string' } } }), responses: { '200': emptyObject } } } as UnseenRoute]
      : []),
    { method: 'put', path: `${one}/user`, operation: { summary: 'Associate the device with the user of a Beams token', security: BEAMS_TOKEN, responses: { '200': emptyObject } } },
    {
      method: 'get',
      path: `${one}/interests`,
      operation: { summary: "A device's interests", responses: { '200': { description: 'The interests', content: { 'application/json': { schema: { type: 'object', properties: { interests: stringArray } } } } } } },
    },
    { method: 'put', path: `${one}/interests`, operation: { summary: "Replace a device's interests", requestBody: json({ type: 'object', properties: { interests: stringArray } }), responses: { '200': emptyObject } } },
    { method: 'post', path: `${one}/interests/{interest}`, operation: { summary: 'Subscribe a device to an interest', responses: { '200': emptyObject } } },
    { method: 'delete', path: `${one}/interests/{interest}`, operation: { summary: 'Unsubscribe a device from an interest', responses: { '200': emptyObject } } },
  ];
};

/**
 * The routes registered outside Nest controllers: raw Fastify routes (attachment transfer, file
 * upload, Beams), the subscriptions served by HTTP SUBSCRIBE and by /ws, and /ws itself. The
 * OpenAPI route test checks this table against what the server registers.
 */
export const UNSEEN_ROUTES: readonly UnseenRoute[] = [
  {
    method: 'put',
    path: '/attachments/upload/{instanceId}/{attachmentId}',
    operation: {
      summary: "Upload an attachment's bytes to the signed link its creation answered",
      requestBody: { required: true, content: { '*/*': { schema: { type: 'string', format: 'binary' } } } },
      responses: { '204': { description: 'Stored' } },
    },
  },
  {
    method: 'get',
    path: '/attachments/download/{instanceId}/{attachmentId}',
    operation: { summary: "Download an attachment's bytes from a signed link", responses: { '200': { description: 'The bytes', content: { '*/*': { schema: { type: 'string', format: 'binary' } } } } } },
  },
  {
    method: 'post',
    path: '/services/chatkit_files/v1/{instanceId}/rooms/{roomId}/users/{userId}/files/{fileName}',
    operation: {
      summary: 'Upload a file (v2 API), raw or as multipart/form-data',
      requestBody: { required: true, content: { '*/*': { schema: { type: 'string', format: 'binary' } }, 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' } } } } } },
      responses: { '200': { description: 'The stored file', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  },
  {
    method: 'get',
    path: '/services/parley_operator/v1/instances/{instanceId}/export/archive',
    consoleOnly: true,
    operation: {
      summary: 'Download the instance archive from a link POST …/export/links minted (no Authorization: the link is the credential, once, for a minute)',
      description:
        'Records the export (InstanceExported, naming the console user the link was minted for) before anything is read, then sends a tar of the directory npm run export writes: ' +
        'blobs/, blobs.ndjson, events.ndjson and, last, manifest.json. `tar -xf` it for npm run import, or POST it to …/import.',
      security: [],
      parameters: ['by', 'nonce', 'expires', 'sig'].map((name) => ({ name, in: 'query', required: true, schema: { type: 'string' }, description: 'Part of the link, as minted' })),
      responses: {
        '200': { description: 'The archive', content: { 'application/x-tar': { schema: { type: 'string', format: 'binary' } } } },
        '403': { description: 'Not a link this server signed for this instance (invalid_link), expired (link_expired) or followed already (link_used)' },
      },
    },
  },
  {
    method: 'post',
    path: '/services/parley_operator/v1/instances/{instanceId}/import',
    consoleOnly: true,
    operation: {
      summary: 'Import an instance archive (the tar GET …/export/archive sends) as a job: checked as npm run import checks it, then loaded, idempotently',
      description:
        'The body is streamed into a spool under DATA_DIR, at most IMPORT_MAX_BYTES (413 over it, nothing written). The whole export, its instance and the master key ' +
        "are checked before anything is written; what the server holds already of it is skipped, so a second import changes nothing. Poll the job's Location.",
      requestBody: { required: true, content: { 'application/x-tar': { schema: { type: 'string', format: 'binary' } } } },
      responses: {
        '202': { description: 'Taken in: the import job (GET …/imports/{importId} tells its progress and outcome)', content: { 'application/json': { schema: { type: 'object' } } } },
        '400': { description: 'Not an instance archive (a tar of an export directory): nothing was written' },
        '409': { description: 'An import of this instance is running' },
        '413': { description: 'Larger than IMPORT_MAX_BYTES: nothing was written' },
      },
    },
  },
  { method: 'post', path: '/publish_api/v1/instances/{instanceId}/publishes/interests', operation: { summary: 'Publish to devices subscribed to interests', requestBody: publishBody('interests'), responses: { '200': published } } },
  { method: 'post', path: '/publish_api/v1/instances/{instanceId}/publishes/users', operation: { summary: 'Publish to the devices of users', requestBody: publishBody('users'), responses: { '200': published } } },
  { method: 'delete', path: '/user_api/v1/instances/{instanceId}/users/{userId}', operation: { summary: 'Delete a user and forget their devices', responses: { '200': emptyObject } } },
  {
    method: 'get',
    path: '/device_api/v1/instances/{instanceId}/web-vapid-public-key',
    operation: {
      summary: 'The VAPID public key Web Push subscriptions use',
      responses: { '200': { description: 'The key', content: { 'application/json': { schema: { type: 'object', properties: { vapidPublicKey: { type: 'string' } } } } } } },
    },
  },
  ...['web', 'apns', 'fcm'].flatMap(device),
  { method: 'subscribe', path: '/services/chatkit/{version}/{instanceId}/users', operation: subscription("The user subscription: the current user, their rooms and memberships, then their changes, and (v6) Parley's own events the subscription asks for", [
      {
        name: 'parley_events',
        in: 'query',
        required: false,
        schema: { type: 'string', example: 'mutes' },
        description: "v6: Parley's own live events to receive, comma-separated: `mutes` (`user_muted`, `user_unmuted`). None unless asked: the original Android SDK treats an unknown event name as an error; v2 knows none (422)",
      },
    ]) },
  { method: 'subscribe', path: '/services/chatkit/{version}/{instanceId}/rooms/{roomId}', operation: subscription("A room's messages (the last `message_limit`), then new and deleted ones, and Parley's own events the subscription asks for", [
      ...count('message_limit', 'How many recent messages to send first'),
      {
        name: 'parley_events',
        in: 'query',
        required: false,
        schema: { type: 'string', example: 'edits,reactions,pins,threads' },
        description: "Parley's own live events to receive, comma-separated: `edits` (`message_updated`), `reactions` (`reaction_added`, `reaction_removed`), `pins` (`message_pinned`, `message_unpinned`), `threads` (`reply_added`, `reply_updated`, `reply_deleted`). None unless asked: the original Android SDK treats an unknown event name as an error",
      },
    ]) },
  { method: 'subscribe', path: '/services/chatkit/{version}/{instanceId}/rooms/{roomId}/memberships', operation: subscription("A room's members, then who joins and leaves") },
  { method: 'subscribe', path: '/services/chatkit_cursors/v2/{instanceId}/cursors/0/users/{userId}', operation: subscription("A user's read cursors, then their changes") },
  { method: 'subscribe', path: '/services/chatkit_cursors/v2/{instanceId}/cursors/0/rooms/{roomId}', operation: subscription("The read cursors in a room, then their changes") },
  { method: 'subscribe', path: '/services/chatkit_presence/v2/{instanceId}/users/{userId}/register', operation: subscription('Be online while this stream is open (the current user)') },
  { method: 'subscribe', path: '/services/chatkit_presence/v2/{instanceId}/users/{userId}', operation: subscription("A user's online state, then its changes") },
  { method: 'subscribe', path: '/services/feeds/v1/{instanceId}/feeds/{feedId}/items', operation: subscription("A feed's items (the last `previous_items`, or after Last-Event-Id), then new ones", count('previous_items', 'How many recent items to send first')) },
  { method: 'subscribe', path: '/services/feeds/v1/{instanceId}/firehose/items', operation: subscription('Every publish, subscription and unsubscription of every feed (su tokens)') },
  {
    method: 'get',
    path: '/ws',
    operation: {
      summary: 'One WebSocket carrying any number of subscriptions',
      description:
        "A WebSocket upgrade speaking pusher-platform's frames: `[100, id, path, headers]` opens one of this document's SUBSCRIBE routes (its headers carry the Authorization) and `[198, id]` ends it; the server answers `[101, id, headers]` (open), `[102, id, eventId, headers, body]` (event) and `[199, id, status, headers, body]` (end of stream); 16 and 17 are ping and pong.",
      responses: { '101': { description: 'Switching to the WebSocket protocol' } },
    },
  },
];

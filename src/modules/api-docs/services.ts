import type { SecurityRequirementObject } from '@nestjs/swagger';

/** How a caller proves who it is, by the security scheme names the document declares. */
export const ACCESS_TOKEN: SecurityRequirementObject[] = [{ accessToken: [] }];
/** The Beams server APIs take the key's secret, as the SDKs send it, or an su access token (the console's). */
export const BEAMS_SECRET_KEY: SecurityRequirementObject[] = [{ beamsSecretKey: [] }, { accessToken: [] }];
export const BEAMS_TOKEN: SecurityRequirementObject[] = [{ beamsToken: [] }];
export const METRICS_TOKEN: SecurityRequirementObject[] = [{ metricsToken: [] }];
export const OPERATOR_TOKEN: SecurityRequirementObject[] = [{ operatorToken: [] }];
/** Public feeds are read without a token; `private-` feeds need one. */
export const OPTIONAL_ACCESS_TOKEN: SecurityRequirementObject[] = [{ accessToken: [] }, {}];
export const NO_CREDENTIALS: SecurityRequirementObject[] = [];

export interface Service {
  /** The tag of every operation whose path starts with `prefix`. */
  readonly tag: string;
  readonly description: string;
  readonly prefix: string;
  readonly security: SecurityRequirementObject[];
  /** Answers errors as Beams does, `{error, description}`, rather than `{error, error_description}`. */
  readonly beamsErrors?: true;
}

/**
 * Every service Parley serves, by path prefix: the document tags and secures each operation by
 * the first service whose prefix its path starts with (an operation may still say otherwise).
 */
export const SERVICES: readonly Service[] = [
  {
    tag: 'Chat',
    prefix: '/services/chatkit/',
    security: ACCESS_TOKEN,
    description: 'Users, rooms, memberships, messages, attachments and typing (Chatkit API v2 and v6, the same data).',
  },
  { tag: 'Cursors', prefix: '/services/chatkit_cursors/', security: ACCESS_TOKEN, description: 'Read cursors (Chatkit cursors service v2).' },
  { tag: 'Presence', prefix: '/services/chatkit_presence/', security: ACCESS_TOKEN, description: 'Online state (Chatkit presence service v2).' },
  { tag: 'Authorizer', prefix: '/services/chatkit_authorizer/', security: ACCESS_TOKEN, description: 'Roles, their permissions and user role assignments (su tokens).' },
  { tag: 'Files', prefix: '/services/chatkit_files/', security: ACCESS_TOKEN, description: 'Files of the v2 API (Chatkit files service v1).' },
  {
    tag: 'Attachment transfer',
    prefix: '/attachments/',
    security: NO_CREDENTIALS,
    description: 'The signed upload and download links that attachment answers hand out: the signature in the query is the credential.',
  },
  {
    tag: 'Token provider',
    prefix: '/services/chatkit_token_provider/',
    security: NO_CREDENTIALS,
    description: 'The test token provider (TOKEN_PROVIDER_ENABLED): access tokens for any user id, for development only.',
  },
  {
    tag: 'Demo',
    prefix: '/services/parley_demo/',
    security: NO_CREDENTIALS,
    description: 'The demo chat (/demo) signs its visitors up here: served only with the test token provider of the bootstrap instance (docs/demo.md).',
  },
  { tag: 'Beams token provider', prefix: '/services/chatkit_beams_token_provider/', security: ACCESS_TOKEN, description: 'Beams tokens for the user of a chat access token.' },
  { tag: 'Scheduler', prefix: '/services/chatkit_scheduler/', security: ACCESS_TOKEN, description: 'Asynchronous deletion of users and rooms, and the status of those jobs.' },
  { tag: 'Audit', prefix: '/services/parley_audit/', security: ACCESS_TOKEN, description: 'Who did what: the events of a user, a room, a message or an actor, paged (su tokens).' },
  {
    tag: 'Operator',
    prefix: '/services/parley_operator/',
    security: OPERATOR_TOKEN,
    description: 'What spans instances, for the console and scripts (CONSOLE_ENABLED=true): instances and their keys, health in detail, export (deployment tokens).',
  },
  { tag: 'Administration', prefix: '/services/parley_admin/', security: ACCESS_TOKEN, description: "User erasure on request (GDPR Art. 17) and its progress; the console's reads: users and rooms by prefix, a room and its members, read cursors of a room or a user, a room's messages and a thread's replies (metadata, or content with the read recorded), Beams devices and interests, instance bans (su tokens)." },
  {
    tag: 'Webhooks',
    prefix: '/services/parley_webhooks/',
    security: ACCESS_TOKEN,
    description: "Chatkit webhooks delivered from the log: manage them, replay from a position or a time (su tokens).",
  },
  { tag: 'Feeds', prefix: '/services/feeds/', security: OPTIONAL_ACCESS_TOKEN, description: 'Pusher Feeds: publish, page, delete and subscribe to feed items.' },
  { tag: 'Beams publish', prefix: '/publish_api/', beamsErrors: true, security: BEAMS_SECRET_KEY, description: 'Beams publish API: push notifications to interests or users.' },
  { tag: 'Beams users', prefix: '/user_api/', beamsErrors: true, security: BEAMS_SECRET_KEY, description: "Beams user API: forget a user's devices." },
  { tag: 'Beams devices', prefix: '/device_api/', beamsErrors: true, security: NO_CREDENTIALS, description: 'Beams device API, as the Beams client SDKs call it.' },
  { tag: 'Subscriptions over WebSocket', prefix: '/ws', security: NO_CREDENTIALS, description: 'Every SUBSCRIBE route, multiplexed over one WebSocket.' },
  { tag: 'Health', prefix: '/health', security: NO_CREDENTIALS, description: 'Readiness (/health) and liveness (/health/live).' },
  { tag: 'Metrics', prefix: '/metrics', security: METRICS_TOKEN, description: 'Prometheus metrics, served only when METRICS_TOKEN is set.' },
  { tag: 'API documentation', prefix: '/openapi.json', security: NO_CREDENTIALS, description: 'This document.' },
];

export const serviceOf = (path: string): Service | undefined => SERVICES.find((service) => path.startsWith(service.prefix));

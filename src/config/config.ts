// One file on purpose, whatever its length: every environment variable Parley reads is read here, where the tests that check them against the documentation look (test/e2e/deployment-files.spec.ts reads this file).
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { CorsOrigins } from '../shared/http/cors';
import { keySecretTooShort } from '../shared/crypto/key-secret';
import { parseWebhookAllowedHosts } from '../shared/webhooks/webhook-targets';
import { DEFAULT_CUSTOM_DATA_MAX_BYTES, JSON_BODY_LIMIT_BYTES } from '../shared/http/body-parser';
import type { RateLimitSettings } from '../shared/http/rate-limit';
import type { SubscriptionCapSettings } from '../modules/streaming/subscription-caps';
import { MAX_PARTITIONS } from '../shared/application/projection-runtime/projector/projection-parts';

/** Every setting Parley reads, from the environment (see the README's configuration table). */
export interface ParleyConfig {
  readonly port: number;
  readonly host: string;
  readonly httpsPort?: number;
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  /**
   * The scheme, host and port clients reach this server at, for links it hands out (attachment
   * downloads, uploads). Unset: `https://localhost:<HTTPS port>` when HTTPS is on, otherwise
   * `http://localhost:<PORT>` (the ports actually listened on).
   */
  readonly publicUrl?: string;
  readonly dataDir: string;
  readonly eventStoreConnectionString?: string;
  readonly mongodbUri?: string;
  readonly mongodbDatabase: string;
  readonly masterKey?: string;
  readonly bootstrap?: {
    readonly instanceId: string;
    readonly cluster: string;
    readonly keyId?: string;
    readonly keySecret?: string;
    readonly tokenProviderEnabled: boolean;
  };
  readonly logLevel: string;
  /** How long a write waits for separate projector workers before answering 503. */
  readonly readYourWritesTimeoutMs: number;
  /**
   * Data keys kept unwrapped in memory (DATA_KEY_CACHE_SIZE), and for how long at most
   * (DATA_KEY_CACHE_TTL_MS): the bound on how long a key another process destroyed stays usable in this one.
   */
  readonly dataKeyCache: { readonly size: number; readonly ttlMs: number };
  /** FEEDS_SEAL_ITEMS: feed items sealed in the log under data keys (destroyed by the feed's items delete), like messages. */
  readonly feedsSealItems: boolean;
  /** Gap between `[0, …]` keep-alive frames on SUBSCRIBE streams (at most 30 s). */
  readonly keepAliveMs: number;
  /** How long SIGTERM/SIGINT may take to drain requests and streams before the process gives up and exits 1. */
  readonly shutdownTimeoutMs: number;
  /** How long a request may take to arrive whole (headers and body) before it is answered 408 and its connection closed. */
  readonly requestTimeoutMs: number;
  /** How long a projection lease lasts unrenewed: how soon a worker takes over from a dead one. */
  readonly projectionLeaseTtlMs: number;
  /**
   * PROJECTOR_PARTITIONS: how many partitions each projection that declares a partitioning
   * is split into, each under its own lease and checkpoint (workers share them out). The same
   * in every process folding one set of read models.
   */
  readonly projectorPartitions: number;
  /**
   * PROJECTOR_THREAD: the embedded server folds its projections on a worker thread of its own
   * (with its own connections to DATA_DIR's stores), leaving the request thread to requests.
   */
  readonly projectorThread: boolean;
  /** How old a stored blob no attachment refers to must be before the orphan blob sweep removes it (uploads in progress are younger). */
  readonly orphanBlobGraceMs: number;
  /** /health reports unready when a projection's oldest unfolded event is older than this. */
  readonly readinessMaxLagMs: number;
  /** /health warns (without turning unready) and parley_event_log_low_space is 1 when the event log has less room than this, in bytes (0: never). */
  readonly storageLowSpaceBytes: number;
  /** Browser origins that may call the API and open /ws (CORS_ORIGINS): `*` (the default) or a list. */
  readonly corsOrigins: CorsOrigins;
  /** BEAMS_VAPID_PUBLIC_KEY / BEAMS_VAPID_PRIVATE_KEY (base64url); unset: derived from the master key. */
  readonly beamsVapidKeys?: { readonly publicKey: string; readonly privateKey: string };
  /** BEAMS_VAPID_SUBJECT: the VAPID contact (mailto: or https:) push services may use. */
  readonly beamsVapidSubject: string;
  /** BEAMS_WEB_PUSH_HOSTS: the push-service hosts a Web Push endpoint may name (`*.` matches any subdomain). */
  readonly beamsWebPushHosts: readonly string[];
  /**
   * Chat, roles, cursors and files API requests allowed per window (0: no limit), whether su
   * tokens count, and requests to the APIs that take no credential (Beams device API, test
   * token provider) per client address and per instance.
   */
  readonly rateLimits: RateLimitSettings;
  /** SUBSCRIPTIONS_PER_* and ANONYMOUS_SUBSCRIPTIONS_PER_*: open subscriptions one caller may hold in this process (0: no cap). */
  readonly subscriptionCaps: SubscriptionCapSettings;
  /** TRUST_PROXY: the proxies (addresses, CIDR ranges) whose X-Forwarded-For names the client address; none when empty. */
  readonly trustProxy: readonly string[];
  /** CUSTOM_DATA_MAX_BYTES: the most a `custom_data` (users, rooms, attachments) may hold, as JSON bytes. */
  readonly customDataMaxBytes: number;
  /** WEBHOOK_ALLOWED_HOSTS: the non-public webhook targets allowed (host names, `host:port`, IP addresses, CIDR ranges). */
  readonly webhookAllowedHosts: readonly string[];
  /**
   * WEBHOOK_RETRY_SCHEDULE_MS: the waits before each retry of a Chatkit webhook delivery; after
   * the last one fails the webhook is deactivated. Default: Chatkit's own (10 s, 30 s, 2 min, 5 min).
   */
  readonly webhookRetryScheduleMs: readonly number[];
  /** WEBHOOK_DELIVERY_TIMEOUT_MS: how long one delivery attempt may take to get the receiver's status. */
  readonly webhookDeliveryTimeoutMs: number;
  /**
   * IDEMPOTENCY_KEY_TTL_HOURS, in milliseconds: how long a retry with the same `Idempotency-Key`
   * is answered from the first request's answer (a fraction of an hour is allowed, for tests).
   */
  readonly idempotencyKeyTtlMs: number;
  /** TOKEN_MAX_LIFETIME_SECONDS: tokens whose `exp` lies further than this past their `iat` (or now) are refused. */
  readonly tokenMaxLifetimeSeconds: number;
  /** CONSOLE_ENABLED: serve the operator console (/console) and the deployment routes (/services/parley_operator); off, both answer 404. */
  readonly consoleEnabled: boolean;
  /**
   * CONSOLE_ADMIN_SECRET (at least 32 characters): the HS256 secret of deployment tokens, the
   * console's credential for what spans instances (docs/console.md); unset, no deployment sign-in.
   */
  readonly consoleAdminSecret?: string;
  /** IMPORT_MAX_BYTES: the largest instance archive `POST …/parley_operator/v1/instances/:id/import` takes (413 over it). */
  readonly importMaxBytes: number;
  /** METRICS_TOKEN: the Bearer token GET /metrics requires; unset, /metrics answers 404. */
  readonly metricsToken?: string;
  /** METRICS_PORT (projector workers only): serve GET /metrics on this port; unset, a worker listens on nothing. */
  readonly metricsPort?: number;
  /** APNS_KEY_FILE / APNS_KEY_ID / APNS_TEAM_ID / APNS_HOST: APNs token auth (unset: iOS devices are skipped). */
  readonly beamsApns?: { readonly keyFile: string; readonly keyId: string; readonly teamId: string; readonly host: string };
  /** FCM_SERVICE_ACCOUNT_FILE / FCM_HOST: FCM HTTP v1 (unset: Android devices are skipped). */
  readonly beamsFcm?: { readonly serviceAccountFile: string; readonly host: string };
}

/** IMPORT_MAX_BYTES unset: 1 GiB of archive, spooled under DATA_DIR while it is checked and imported. */
export const DEFAULT_IMPORT_MAX_BYTES = 1024 ** 3;

/** A setting that cannot be used: the message names the variable and what it accepts. */
export class ConfigError extends Error {}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/**
 * A whole number from the environment within [min, max], or the fallback when unset. Anything
 * else stops the start: `Number('abc')` is NaN, which timers read as 1 ms and deadlines as never.
 */
export function integerVariable<F extends number | undefined = undefined>(
  env: NodeJS.ProcessEnv,
  name: string,
  { min, max, what }: { readonly min: number; readonly max: number; readonly what: string },
  fallback?: F,
): number | F {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback as F;
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be ${what} from ${min} to ${max}, got "${env[name]}"`);
  }
  return n;
}

/** A positive number of hours (decimals allowed: `0.5`) within [min, max], in milliseconds; the fallback when unset. */
function hoursVariable(env: NodeJS.ProcessEnv, name: string, min: number, max: number, fallbackHours: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallbackHours * 3_600_000;
  const hours = /^(\d+(\.\d*)?|\.\d+)$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(hours) || hours < min || hours > max) {
    throw new ConfigError(`${name} must be a number of hours from ${min} to ${max}, got "${env[name]}"`);
  }
  return Math.round(hours * 3_600_000);
}

/** `true` or `false` (any case), or the fallback when unset; anything else stops the start rather than meaning "off". */
function booleanVariable(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

const PORT = { min: 0, max: 65535, what: 'a port number' };
const MILLISECONDS = (min: number, max: number) => ({ min, max, what: 'a whole number of milliseconds' });
const REQUESTS = { min: 0, max: 1_000_000_000, what: 'a whole number of requests' };
const SECONDS = (min: number, max: number) => ({ min, max, what: 'a whole number of seconds' });

/**
 * 30 days: far above the day chatkit-server, the token providers and Feeds give their tokens,
 * and above the week or month apps pass as `tokenExpiry`, but a stolen token still dies.
 */
export const DEFAULT_TOKEN_MAX_LIFETIME_SECONDS = 30 * 86_400;
const SUBSCRIPTIONS = { min: 0, max: 10_000_000, what: 'a whole number of subscriptions' };

/** The least CONSOLE_ADMIN_SECRET may hold: an HS256 secret shorter than its 256-bit hash is guessable offline from one token. */
export const CONSOLE_ADMIN_SECRET_MIN_LENGTH = 32;

function consoleAdminSecretVariable(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.CONSOLE_ADMIN_SECRET;
  if (value === undefined || value === '') return undefined;
  if (value.length < CONSOLE_ADMIN_SECRET_MIN_LENGTH || value.trim() !== value) {
    throw new ConfigError(
      `CONSOLE_ADMIN_SECRET must be at least ${CONSOLE_ADMIN_SECRET_MIN_LENGTH} characters without surrounding spaces (openssl rand -base64 32), got ${value.length}`,
    );
  }
  return value;
}

/** 32 bytes in canonical base64, as `openssl rand -base64 32` prints them. */
function masterKeyVariable(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.MASTER_KEY?.trim();
  if (!value) return undefined;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length !== 32 || bytes.toString('base64') !== value) {
    throw new ConfigError('MASTER_KEY must be 32 random bytes in base64 (openssl rand -base64 32)');
  }
  return value;
}

/**
 * CORS_ORIGINS: unset or `*` lets a page on any origin call (tokens, not cookies, authenticate:
 * an app's own token endpoint decides who gets one); `none` allows no other origin; otherwise
 * a comma-separated list of origins such as `https://app.example.com,http://localhost:3000`.
 */
function corsOriginsVariable(env: NodeJS.ProcessEnv): CorsOrigins {
  const raw = env.CORS_ORIGINS?.trim();
  if (!raw || raw === '*') return '*';
  if (raw === 'none') return [];
  return raw.split(',').map((entry) => {
    const value = entry.trim().replace(/\/$/, '');
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== value) {
      throw new ConfigError(
        `CORS_ORIGINS must be *, none or a comma-separated list of origins like https://app.example.com (scheme, host and port only), got "${entry.trim()}"`,
      );
    }
    return url.origin;
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ParleyConfig {
  const httpsPort = integerVariable(env, 'HTTPS_PORT', PORT);
  if (httpsPort !== undefined && (!env.TLS_CERT_FILE || !env.TLS_KEY_FILE)) {
    throw new ConfigError('HTTPS_PORT needs TLS_CERT_FILE and TLS_KEY_FILE');
  }
  // Checked even without INSTANCE_LOCATOR: a wrong value is a mistake either way.
  const tokenProviderEnabled = booleanVariable(env, 'TOKEN_PROVIDER_ENABLED', false);
  let bootstrap: ParleyConfig['bootstrap'];
  if (env.INSTANCE_LOCATOR) {
    const parts = env.INSTANCE_LOCATOR.split(':');
    if (parts.length !== 3 || !parts[2]) {
      throw new ConfigError(`INSTANCE_LOCATOR must look like v1:<cluster>:<instance_id>, got "${env.INSTANCE_LOCATOR}"`);
    }
    let keyId: string | undefined;
    let keySecret: string | undefined;
    if (env.INSTANCE_KEY) {
      const m = /^([^:]+):(.+)$/.exec(env.INSTANCE_KEY);
      if (!m) throw new ConfigError('INSTANCE_KEY must look like <key_id>:<secret>');
      [, keyId, keySecret] = m;
      const tooShort = keySecretTooShort(keySecret!);
      if (tooShort) throw new ConfigError(`INSTANCE_KEY: ${tooShort}`);
    }
    bootstrap = {
      cluster: parts[1],
      instanceId: parts[2],
      keyId,
      keySecret,
      tokenProviderEnabled,
    };
  } else if (env.INSTANCE_KEY) {
    throw new ConfigError('INSTANCE_KEY needs INSTANCE_LOCATOR');
  }
  let publicUrl: string | undefined;
  if (env.PUBLIC_URL) {
    let url: URL;
    try {
      url = new URL(env.PUBLIC_URL);
    } catch {
      throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${env.PUBLIC_URL}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${env.PUBLIC_URL}"`);
    }
    publicUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  }
  if (!env.BEAMS_VAPID_PUBLIC_KEY !== !env.BEAMS_VAPID_PRIVATE_KEY) {
    throw new ConfigError('Set both BEAMS_VAPID_PUBLIC_KEY and BEAMS_VAPID_PRIVATE_KEY, or neither');
  }
  const beamsVapidSubject = env.BEAMS_VAPID_SUBJECT || 'mailto:beams@parley.invalid';
  if (!/^(mailto|https):/.test(beamsVapidSubject)) throw new ConfigError(`BEAMS_VAPID_SUBJECT must be a mailto: or https: URL, got "${beamsVapidSubject}"`);
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  return {
    port: integerVariable(env, 'PORT', PORT, 8080),
    host: env.HOST || '0.0.0.0',
    httpsPort,
    tlsCertFile: env.TLS_CERT_FILE,
    tlsKeyFile: env.TLS_KEY_FILE,
    publicUrl,
    dataDir: resolve(env.DATA_DIR || './data'),
    eventStoreConnectionString: env.EVENTSTORE_CONNECTION_STRING || undefined,
    mongodbUri: env.MONGODB_URI || undefined,
    mongodbDatabase: env.MONGODB_DATABASE || 'parley',
    masterKey: masterKeyVariable(env),
    bootstrap,
    logLevel,
    readYourWritesTimeoutMs: integerVariable(env, 'READ_YOUR_WRITES_TIMEOUT_MS', MILLISECONDS(1, 600_000), 5_000),
    dataKeyCache: {
      size: integerVariable(env, 'DATA_KEY_CACHE_SIZE', { min: 1, max: 10_000_000, what: 'a whole number of keys' }, 100_000),
      ttlMs: integerVariable(env, 'DATA_KEY_CACHE_TTL_MS', MILLISECONDS(1, 3_600_000), 60_000),
    },
    feedsSealItems: booleanVariable(env, 'FEEDS_SEAL_ITEMS', false),
    // SDKs that watch heartbeats give up after 60 s of silence: a frame every 30 s at most.
    keepAliveMs: integerVariable(env, 'KEEPALIVE_INTERVAL_MS', MILLISECONDS(100, 30_000), 15_000),
    shutdownTimeoutMs: integerVariable(env, 'SHUTDOWN_TIMEOUT_MS', MILLISECONDS(100, 600_000), 10_000),
    // Node's own default; Fastify's is none, so a body that stops short held its request open forever.
    requestTimeoutMs: integerVariable(env, 'REQUEST_TIMEOUT_MS', MILLISECONDS(1_000, 3_600_000), 300_000),
    projectionLeaseTtlMs: integerVariable(env, 'PROJECTION_LEASE_TTL_MS', MILLISECONDS(1_000, 600_000), 15_000),
    projectorPartitions: integerVariable(env, 'PROJECTOR_PARTITIONS', { min: 1, max: MAX_PARTITIONS, what: 'a whole number of partitions' }, 1),
    projectorThread: booleanVariable(env, 'PROJECTOR_THREAD', true),
    orphanBlobGraceMs: integerVariable(env, 'ORPHAN_BLOB_GRACE_MS', MILLISECONDS(1_000, 30 * 86_400_000), 3_600_000),
    readinessMaxLagMs: integerVariable(env, 'READINESS_MAX_LAG_MS', MILLISECONDS(100, 3_600_000), 10_000),
    storageLowSpaceBytes: integerVariable(env, 'STORAGE_LOW_SPACE_BYTES', { min: 0, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of bytes' }, 1024 ** 3),
    corsOrigins: corsOriginsVariable(env),
    beamsVapidKeys: env.BEAMS_VAPID_PUBLIC_KEY
      ? { publicKey: env.BEAMS_VAPID_PUBLIC_KEY, privateKey: env.BEAMS_VAPID_PRIVATE_KEY! }
      : undefined,
    beamsVapidSubject,
    beamsWebPushHosts: webPushHostsVariable(env),
    webhookAllowedHosts: webhookAllowedHostsVariable(env),
    webhookRetryScheduleMs: webhookRetryScheduleVariable(env),
    webhookDeliveryTimeoutMs: integerVariable(env, 'WEBHOOK_DELIVERY_TIMEOUT_MS', MILLISECONDS(100, 600_000), 10_000),
    // At least a second (0.0003 h), at most a year; the IETF draft leaves it to the server, Stripe keeps keys 24 h.
    idempotencyKeyTtlMs: hoursVariable(env, 'IDEMPOTENCY_KEY_TTL_HOURS', 0.0003, 8_760, 24),
    customDataMaxBytes: integerVariable(env, 'CUSTOM_DATA_MAX_BYTES', { min: 2, max: JSON_BODY_LIMIT_BYTES, what: 'a whole number of bytes' }, DEFAULT_CUSTOM_DATA_MAX_BYTES),
    ...beamsProviderVariables(env),
    tokenMaxLifetimeSeconds: integerVariable(env, 'TOKEN_MAX_LIFETIME_SECONDS', SECONDS(60, 10 * 365 * 86_400), DEFAULT_TOKEN_MAX_LIFETIME_SECONDS),
    consoleEnabled: booleanVariable(env, 'CONSOLE_ENABLED', false),
    consoleAdminSecret: consoleAdminSecretVariable(env),
    importMaxBytes: integerVariable(env, 'IMPORT_MAX_BYTES', { min: 1024, max: Number.MAX_SAFE_INTEGER, what: 'a whole number of bytes' }, DEFAULT_IMPORT_MAX_BYTES),
    metricsToken: env.METRICS_TOKEN || undefined,
    metricsPort: integerVariable(env, 'METRICS_PORT', PORT),
    rateLimits: {
      perUser: integerVariable(env, 'RATE_LIMIT_PER_USER', REQUESTS, 500),
      // Off by default: one instance's traffic is the deployment's own to size (a multi-tenant knob).
      perInstance: integerVariable(env, 'RATE_LIMIT_PER_INSTANCE', REQUESTS, 0),
      windowMs: integerVariable(env, 'RATE_LIMIT_WINDOW_MS', MILLISECONDS(100, 3_600_000), 10_000),
      su: booleanVariable(env, 'RATE_LIMIT_SU', false),
      anonymousPerAddress: integerVariable(env, 'RATE_LIMIT_ANONYMOUS_PER_ADDRESS', REQUESTS, 600),
      anonymousPerInstance: integerVariable(env, 'RATE_LIMIT_ANONYMOUS_PER_INSTANCE', REQUESTS, 6_000),
    },
    trustProxy: trustProxyVariable(env),
    subscriptionCaps: {
      perConnection: integerVariable(env, 'SUBSCRIPTIONS_PER_CONNECTION', SUBSCRIPTIONS, 2_000),
      perUser: integerVariable(env, 'SUBSCRIPTIONS_PER_USER', SUBSCRIPTIONS, 4_000),
      anonymousPerConnection: integerVariable(env, 'ANONYMOUS_SUBSCRIPTIONS_PER_CONNECTION', SUBSCRIPTIONS, 100),
      anonymousPerAddress: integerVariable(env, 'ANONYMOUS_SUBSCRIPTIONS_PER_ADDRESS', SUBSCRIPTIONS, 1_000),
    },
  };
}

/** The public push services browsers subscribe at (Chrome/Edge via FCM, Firefox, Windows, Safari). */
export const DEFAULT_WEB_PUSH_HOSTS = [
  'fcm.googleapis.com',
  'updates.push.services.mozilla.com',
  '*.push.services.mozilla.com',
  '*.notify.windows.com',
  'web.push.apple.com',
  '*.push.apple.com',
];

/** The device API takes subscriptions from anyone: only these hosts are ever POSTed to (no SSRF). */
function webPushHostsVariable(env: NodeJS.ProcessEnv): readonly string[] {
  const raw = env.BEAMS_WEB_PUSH_HOSTS?.trim();
  if (!raw) return DEFAULT_WEB_PUSH_HOSTS;
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase());
  const bad = hosts.find((h) => !/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(h));
  if (bad !== undefined) {
    throw new ConfigError(`BEAMS_WEB_PUSH_HOSTS must be a comma-separated list of host names, each optionally starting with "*.", got "${bad}"`);
  }
  return hosts;
}

/** Names proxy-addr (Fastify's trustProxy) knows for ranges of proxies. */
const PROXY_PRESETS = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: the reverse proxies in front of Parley, whose X-Forwarded-For then names the
 * client address the per-address limits count: IP addresses, CIDR ranges or proxy-addr's
 * presets (loopback, linklocal, uniquelocal). Unset: the connection's address is the client's.
 */
function trustProxyVariable(env: NodeJS.ProcessEnv): readonly string[] {
  const entries = (env.TRUST_PROXY ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address);
    const fits = PROXY_PRESETS.includes(entry) || (family !== 0 && (prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))));
    if (!fits) {
      throw new ConfigError(`TRUST_PROXY must be a comma-separated list of IP addresses, CIDR ranges, loopback, linklocal or uniquelocal, got "${entry}"`);
    }
  }
  return entries;
}

/**
 * Chatkit retried a webhook four times, after 10 s, a further 30 s, 120 s and 300 s, then marked
 * it inactive (support.pusher.com, "Why are my Chatkit webhooks being disabled?").
 */
export const CHATKIT_WEBHOOK_RETRY_SCHEDULE_MS: readonly number[] = [10_000, 30_000, 120_000, 300_000];

/** A comma list of waits in ms (empty: no retry); unset, Chatkit's schedule. */
function webhookRetryScheduleVariable(env: NodeJS.ProcessEnv): readonly number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE_MS?.trim();
  if (raw === undefined) return CHATKIT_WEBHOOK_RETRY_SCHEDULE_MS;
  if (raw === '') return [];
  const waits = raw.split(',').map((wait) => wait.trim());
  if (waits.length > 20 || !waits.every((wait) => /^\d+$/.test(wait) && Number(wait) <= 86_400_000)) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE_MS must be a comma-separated list of up to 20 whole numbers of milliseconds from 0 to 86400000, got "${env.WEBHOOK_RETRY_SCHEDULE_MS}"`);
  }
  return waits.map(Number);
}

/** Outgoing webhooks may reach non-public addresses only where the operator says so. */
function webhookAllowedHostsVariable(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    return parseWebhookAllowedHosts(env.WEBHOOK_ALLOWED_HOSTS);
  } catch (error) {
    throw new ConfigError(
      `WEBHOOK_ALLOWED_HOSTS must be a comma-separated list of host names, IP addresses and CIDR ranges, each with an optional :port (e.g. hooks.internal, 10.0.0.0/8, [::1]:9000), got "${(error as Error).message}"`,
    );
  }
}

/** The APNs and FCM settings: each provider is off unless its key file is set, and then needs all its settings. */
function beamsProviderVariables(env: NodeJS.ProcessEnv): Pick<ParleyConfig, 'beamsApns' | 'beamsFcm'> {
  const apnsSet = [env.APNS_KEY_FILE, env.APNS_KEY_ID, env.APNS_TEAM_ID].filter(Boolean).length;
  if (apnsSet !== 0 && apnsSet !== 3) throw new ConfigError('Set all of APNS_KEY_FILE, APNS_KEY_ID and APNS_TEAM_ID, or none');
  return {
    beamsApns: env.APNS_KEY_FILE
      ? { keyFile: resolve(env.APNS_KEY_FILE), keyId: env.APNS_KEY_ID!, teamId: env.APNS_TEAM_ID!, host: env.APNS_HOST || 'api.push.apple.com' }
      : undefined,
    beamsFcm: env.FCM_SERVICE_ACCOUNT_FILE
      ? { serviceAccountFile: resolve(env.FCM_SERVICE_ACCOUNT_FILE), host: env.FCM_HOST || 'fcm.googleapis.com' }
      : undefined,
  };
}

export const CONFIG = Symbol('ParleyConfig');

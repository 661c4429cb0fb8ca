import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors';
import { RateCounters } from '../ports/rate-counter.port';
import { toErrorResponse } from './error.filter';

/** RATE_LIMIT_*: requests allowed per window (0: no limit) and whether su tokens count. */
export interface RateLimitSettings {
  readonly perUser: number;
  readonly perInstance: number;
  readonly windowMs: number;
  readonly su: boolean;
  /** The APIs anyone may call without a credential (Beams device API, test token provider): per client address… */
  readonly anonymousPerAddress: number;
  /** …and per instance, all addresses together. */
  readonly anonymousPerInstance: number;
}

/** Who a request's token says it is, as the access-token verifier answers (it caches what it verified). */
export interface RequestIdentity {
  readonly userId?: string;
  readonly su: boolean;
}

export interface TokenIdentifier {
  verify(authorization: string | undefined, instanceId: string): Promise<RequestIdentity>;
}

interface Logger {
  warn(details: object, message: string): void;
}

/** How a refusal is answered on a path: the service's error shape (Beams' `{error, description}` on its APIs). */
export type ErrorAnswer = (url: string, error: DomainError) => { status: number; body: unknown };

/** The chat (v2, v6), roles, cursors and files APIs, limited per user and per instance (valid tokens only). */
const LIMITED = /^\/services\/(chatkit|chatkit_authorizer|chatkit_cursors|chatkit_files)\//;

/**
 * The APIs that take no credential, limited per client address and per instance: the Beams
 * device API (a device registers itself), the test token provider (which signs a token for
 * any user id asked) and the demo chat's sign-up beside it. Health, metrics, the Beams publish API (its own 100/s bucket) and the
 * Beams token provider (a valid token) are not limited.
 */
const ANONYMOUS = /^\/(?:device_api\/v1\/instances|services\/chatkit_token_provider\/v1|services\/parley_demo\/v1)\/([^/?]+)/;

/** What `fastify.createRateLimit` answers (the plugin's own arithmetic on the counters' window). */
interface LimitResult {
  readonly isAllowed: boolean;
  readonly max: number;
  readonly remaining: number;
  readonly ttlInSeconds: number;
  readonly isExceeded: boolean;
}
type Limiter = (request: FastifyRequest) => Promise<LimitResult>;

/** How long a request waits for its counters before it is served without a limit (a stalled store). */
export const RATE_COUNTERS_DEADLINE_MS = 1_000;

/** `counting`, or a rejection once `RATE_COUNTERS_DEADLINE_MS` have passed without an answer. */
function withinDeadline<T>(counting: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the rate limit counters did not answer within ${RATE_COUNTERS_DEADLINE_MS} ms`)), RATE_COUNTERS_DEADLINE_MS);
  });
  return Promise.race([counting, late]).finally(() => clearTimeout(timer));
}

/**
 * The store @fastify/rate-limit counts in, on the deployment's RateCounters: windows shared by
 * every API process (the plugin's own stores are per process, or Redis).
 */
const storeOn = (counters: RateCounters) =>
  class RateCountersStore {
    incr(key: string, done: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      const nowMs = Date.now();
      withinDeadline(counters.hit(key, timeWindow, nowMs)).then(
        ({ count, resetAtMs }) => done(null, { current: count, ttl: resetAtMs - nowMs }),
        (error: Error) => done(error),
      );
    }

    child(): RateCountersStore {
      return this;
    }
  };

/** The limits one request counts against, each with the key it counts under and whose allowance it is. */
type Counted = readonly (readonly [limit: Limiter | null, key: string | undefined, whose: string])[];

/**
 * Limits the chat, roles, cursors and files APIs per user (the token's `sub`) and per instance,
 * and the anonymous APIs (Beams device API, test token provider) per client address and per
 * instance, with @fastify/rate-limit, counting in the deployment's RateCounters. On the chat
 * APIs only requests with a valid token count: the token is verified here through the
 * verifier's cache, so the route's guard then answers from the same cache (one verification
 * per request), and a request without a valid token is left to the guard to refuse, never
 * spending an instance's allowance. su tokens are not limited unless RATE_LIMIT_SU=true. The
 * client address is the connection's, or what a proxy TRUST_PROXY names says it is.
 * SUBSCRIBE streams (long-lived; capped per connection and user instead), /ws, health and
 * metrics are not limited. Every limited answer carries X-RateLimit-Limit, -Remaining and
 * -Reset (seconds) of the tighter limit; a refusal is a 429 in the service's error shape
 * (`answer`) with Retry-After, and nothing was done.
 */
export function registerRateLimits(
  fastify: FastifyInstance,
  settings: RateLimitSettings,
  counters: RateCounters,
  tokens: TokenIdentifier,
  logger: Logger,
  answer: ErrorAnswer = (url, error) => toErrorResponse(error, url),
): void {
  if ([settings.perUser, settings.perInstance, settings.anonymousPerAddress, settings.anonymousPerInstance].every((max) => max === 0)) return;
  /** The key each request counts under, by limit. */
  const keys = new WeakMap<FastifyRequest, Map<Limiter, string>>();
  // Limits are applied by the hook below, not per route: one request passes both of its limits.
  void fastify.register(fastifyRateLimit, { global: false, store: storeOn(counters), timeWindow: settings.windowMs });
  fastify.after(() => {
    const limiter = (max: number): Limiter | null => {
      if (max === 0) return null;
      let self: Limiter;
      const limit = fastify.createRateLimit({ max, timeWindow: settings.windowMs, keyGenerator: (request) => keys.get(request)?.get(self) ?? '' });
      self = (request) => limit(request) as Promise<LimitResult>;
      return self;
    };
    const perUser = limiter(settings.perUser);
    const perInstance = limiter(settings.perInstance);
    const anonymousPerAddress = limiter(settings.anonymousPerAddress);
    const anonymousPerInstance = limiter(settings.anonymousPerInstance);
    const seconds = Math.ceil(settings.windowMs / 1000);

    /** What `request` counts against, or null when it is not limited. */
    const countedAs = async (request: FastifyRequest): Promise<Counted | null> => {
      const anonymous = ANONYMOUS.exec(request.url);
      if (anonymous) {
        const instanceId = decodeSafely(anonymous[1]);
        return [
          [anonymousPerAddress, `anonymous-address:${request.ip}`, 'this address'],
          [anonymousPerInstance, `anonymous-instance:${instanceId}`, 'this instance'],
        ];
      }
      if (!LIMITED.test(request.url)) return null;
      const instanceId = (request.params as Record<string, string> | undefined)?.instanceId;
      if (!instanceId) return null;
      const identity = await tokens.verify(request.headers.authorization, instanceId).catch(() => null);
      if (!identity || (identity.su && !settings.su)) return null;
      return [
        [perUser, identity.userId && `chat-user:${instanceId}:${identity.userId}`, 'this user'],
        [perInstance, `chat-instance:${instanceId}`, 'this instance'],
      ];
    };

    fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.method === 'SUBSCRIBE' || request.method === 'OPTIONS') return;
      const counted = await countedAs(request);
      if (!counted) return;
      const byLimit = new Map<Limiter, string>();
      for (const [limit, key] of counted) if (limit && key) byLimit.set(limit, key);
      keys.set(request, byLimit);
      let tightest: LimitResult | undefined;
      try {
        for (const [limit, key, whose] of counted) {
          if (!limit || !key) continue;
          const result = await limit(request);
          if (!tightest || result.remaining < tightest.remaining) tightest = result;
          if (result.isExceeded) {
            const refused = new DomainError(
              'too_many_requests',
              'rate_limited',
              `More than ${result.max} requests in ${seconds} s for ${whose}; nothing was done, retry after ${result.ttlInSeconds} s`,
            );
            const { status, body } = answer(request.url, refused);
            headers(reply, result).header('retry-after', result.ttlInSeconds);
            return reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
          }
        }
      } catch (error) {
        // The counters are unreachable or stalled: serve rather than refuse what no limit was shown to exceed.
        logger.warn({ err: error }, 'rate limit counters failed; request served without a limit');
        return;
      }
      if (tightest) headers(reply, tightest);
    });
  });
}

/** A path segment as text, or as sent when it is not valid percent-encoding (the route refuses it then). */
const decodeSafely = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

const headers = (reply: FastifyReply, result: LimitResult): FastifyReply =>
  reply
    .header('x-ratelimit-limit', result.max)
    .header('x-ratelimit-remaining', result.remaining)
    .header('x-ratelimit-reset', result.ttlInSeconds);

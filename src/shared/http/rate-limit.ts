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

/** The chat (v2, v6), roles, cursors and files APIs; health, metrics, Beams and the token providers are not limited. */
const LIMITED = /^\/services\/(chatkit|chatkit_authorizer|chatkit_cursors|chatkit_files)\//;

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

/**
 * Limits the chat, roles, cursors and files APIs per user (the token's `sub`) and per instance
 * with @fastify/rate-limit, counting in the deployment's RateCounters. Only requests with a
 * valid token count: the token is verified here through the verifier's cache, so the route's
 * guard then answers from the same cache (one verification per request), and a request without
 * a valid token is left to the guard to refuse, never spending an instance's allowance. su
 * tokens are not limited unless RATE_LIMIT_SU=true. SUBSCRIBE streams (long-lived), /ws,
 * health and metrics are not limited. Every limited answer carries X-RateLimit-Limit,
 * -Remaining and -Reset (seconds) of the tighter limit; a refusal is a 429 in the Chatkit error
 * shape with Retry-After, and nothing was done.
 */
export function registerRateLimits(
  fastify: FastifyInstance,
  settings: RateLimitSettings,
  counters: RateCounters,
  tokens: TokenIdentifier,
  logger: Logger,
): void {
  if (settings.perUser === 0 && settings.perInstance === 0) return;
  const actors = new WeakMap<FastifyRequest, { instanceId: string; userId?: string }>();
  // Limits are applied by the hook below, not per route: one request passes both limits.
  void fastify.register(fastifyRateLimit, { global: false, store: storeOn(counters), timeWindow: settings.windowMs });
  fastify.after(() => {
    const limiter = (max: number, key: (actor: { instanceId: string; userId?: string }) => string | undefined): Limiter | null => {
      if (max === 0) return null;
      const limit = fastify.createRateLimit({ max, timeWindow: settings.windowMs, keyGenerator: (request) => key(actors.get(request)!) ?? '' });
      return (request) => limit(request) as Promise<LimitResult>;
    };
    const perUser = limiter(settings.perUser, ({ instanceId, userId }) => userId && `chat-user:${instanceId}:${userId}`);
    const perInstance = limiter(settings.perInstance, ({ instanceId }) => `chat-instance:${instanceId}`);
    const seconds = Math.ceil(settings.windowMs / 1000);

    fastify.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.method === 'SUBSCRIBE' || request.method === 'OPTIONS' || !LIMITED.test(request.url)) return;
      const instanceId = (request.params as Record<string, string> | undefined)?.instanceId;
      if (!instanceId) return;
      const identity = await tokens.verify(request.headers.authorization, instanceId).catch(() => null);
      if (!identity || (identity.su && !settings.su)) return;
      actors.set(request, { instanceId, userId: identity.userId });
      let tightest: LimitResult | undefined;
      try {
        for (const [limit, whose] of [[identity.userId ? perUser : null, 'this user'], [perInstance, 'this instance']] as const) {
          if (!limit) continue;
          const result = await limit(request);
          if (!tightest || result.remaining < tightest.remaining) tightest = result;
          if (result.isExceeded) {
            const refused = new DomainError(
              'too_many_requests',
              'rate_limited',
              `More than ${result.max} requests in ${seconds} s for ${whose}; nothing was done, retry after ${result.ttlInSeconds} s`,
            );
            const { status, body } = toErrorResponse(refused, request.url);
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

const headers = (reply: FastifyReply, result: LimitResult): FastifyReply =>
  reply
    .header('x-ratelimit-limit', result.max)
    .header('x-ratelimit-remaining', result.remaining)
    .header('x-ratelimit-reset', result.ttlInSeconds);

import { randomUUID } from 'node:crypto';

/**
 * When Parley's client libraries try a request again, and how long they wait first. A write
 * carries one `Idempotency-Key` across all its attempts, so the server applies it at most once
 * and answers a retry with the first attempt's answer (`Idempotent-Replayed: true`): retrying a
 * write whose answer was lost is then as safe as retrying a read. Wire contract: docs/idempotency.md.
 */
export interface RetryOptions {
  /** Attempts after the first (default 4; 0 never retries). */
  retries?: number;
  /** The first wait, doubled at each retry up to `maxDelayMs` and jittered (default 250 ms). */
  minDelayMs?: number;
  /** The longest wait before a retry, a server's `Retry-After` included (default 5,000 ms). */
  maxDelayMs?: number;
  /** An attempt without a whole answer after this long is abandoned, and retried (default 30,000 ms). */
  timeoutMs?: number;
  /**
   * Called before each wait for a retry, e.g. to log it: the attempt that failed (from 1), how
   * long until the next, and why (an `ErrorResponse`, or the transport's error). A hook that
   * throws ends the call with its error.
   */
  onRetry?: (retry: { attempt: number; delayMs: number; error: unknown }) => void;
}

export type RetryPolicy = Required<Omit<RetryOptions, 'onRetry'>>;

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, minDelayMs: 250, maxDelayMs: 5_000, timeoutMs: 30_000 };

/** The options merged over the defaults, each checked (a TypeError names a bad one). */
export function retryPolicy({ retries, minDelayMs, maxDelayMs, timeoutMs }: RetryOptions = {}): RetryPolicy {
  const given = Object.entries({ retries, minDelayMs, maxDelayMs, timeoutMs }).filter(([, v]) => v !== undefined);
  const policy: RetryPolicy = { ...DEFAULT_RETRY, ...Object.fromEntries(given) };
  for (const [name, value] of Object.entries(policy)) {
    if (!(Number.isInteger(value) && value >= 0)) throw new TypeError(`retry.${name} must be a whole number ≥ 0, got ${String(value)}`);
  }
  if (policy.timeoutMs === 0) throw new TypeError('retry.timeoutMs must be at least 1');
  if (policy.minDelayMs > policy.maxDelayMs) throw new TypeError('retry.minDelayMs must not exceed retry.maxDelayMs');
  return policy;
}

/** The server's rule for a key (and the IETF draft's): 1–255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The caller's key, checked, or a fresh random UUID for one logical write. */
export function idempotencyKeyFor(given: string | undefined): string {
  if (given === undefined) return randomUUID();
  if (typeof given !== 'string' || !IDEMPOTENCY_KEY.test(given)) {
    throw new TypeError('idempotencyKey must be 1–255 visible ASCII characters (no spaces)');
  }
  return given;
}

/** What one attempt ended with, as far as retrying cares. */
export type AttemptOutcome =
  | { readonly kind: 'answer'; readonly status: number; readonly error?: string; readonly retryAfter?: string | null }
  | { readonly kind: 'failure'; readonly error: unknown };

/**
 * Transport failures worth another attempt: the connection refused, reset or cut, a timeout.
 * Not a certificate Node does not trust, a redirect or a bad URL: those fail the same way again.
 */
const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

export function isTransientFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { name, code } = e as { name?: unknown; code?: unknown };
    if (name === 'TimeoutError') return true; // the attempt's own timeout (AbortSignal.timeout)
    if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
  }
  return false;
}

/** `Retry-After` (seconds, or an HTTP date) in milliseconds from `now`, or null when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number | null {
  if (header === null || header === undefined || header.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * How long to wait before attempt `attempt + 1` (`attempt` counts from 1), or null to give up
 * with this outcome. Retried: transport failures and timeouts, 503 (the server could not take
 * the request now, or could not say whether it kept it: the key makes a retry safe either
 * way), and 409 `…/idempotency_key_in_flight` (the first attempt is still running: its answer
 * comes with the retry). The wait is the server's `Retry-After` when it gives one, else an
 * exponential backoff with jitter; never more than `maxDelayMs`.
 */
export function retryDelayMs(outcome: AttemptOutcome, attempt: number, policy: RetryPolicy, random: () => number = Math.random): number | null {
  if (attempt > policy.retries) return null;
  if (outcome.kind === 'failure') {
    if (!isTransientFailure(outcome.error)) return null;
  } else if (!(outcome.status === 503 || (outcome.status === 409 && /(^|\/)idempotency_key_in_flight$/.test(outcome.error ?? '')))) {
    return null;
  }
  const told = outcome.kind === 'answer' ? retryAfterMs(outcome.retryAfter) : null;
  if (told !== null) return Math.min(told, policy.maxDelayMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** (attempt - 1));
  // "Equal jitter": at least half the backoff, so clients that failed together spread out.
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

import { DEFAULT_RETRY, idempotencyKeyFor, isTransientFailure, retryAfterMs, retryDelayMs, retryPolicy } from './retries';

/** When the client libraries retry and how long they wait: pure decisions, no clock or socket. */
describe('client retries', () => {
  const policy = retryPolicy({ retries: 3, minDelayMs: 100, maxDelayMs: 1_000 });
  const reset = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
  const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
  const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
  const untrusted = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }) });
  const redirect = Object.assign(new TypeError('fetch failed'), { cause: new Error('unexpected redirect') });

  it('retries transport failures, timeouts, 503 and 409 idempotency_key_in_flight', () => {
    for (const error of [reset, refused, timeout]) expect(retryDelayMs({ kind: 'failure', error }, 1, policy, () => 1)).toBe(100);
    expect(retryDelayMs({ kind: 'answer', status: 503, error: 'services/chatkit/service_unavailable/x' }, 1, policy, () => 1)).toBe(100);
    expect(retryDelayMs({ kind: 'answer', status: 409, error: 'services/chatkit/conflict/idempotency_key_in_flight' }, 1, policy, () => 1)).toBe(100);
    expect(retryDelayMs({ kind: 'answer', status: 409, error: 'idempotency_key_in_flight' }, 1, policy, () => 1)).toBe(100);
  });

  it('does not retry what would fail again: other answers, an untrusted certificate, a redirect, a bug', () => {
    for (const status of [400, 401, 403, 404, 413, 422, 429, 500]) {
      expect(retryDelayMs({ kind: 'answer', status, error: 'services/chatkit/x/y' }, 1, policy)).toBeNull();
    }
    expect(retryDelayMs({ kind: 'answer', status: 409, error: 'services/chatkit/conflict/room_already_exists' }, 1, policy)).toBeNull();
    expect(retryDelayMs({ kind: 'answer', status: 422, error: 'services/chatkit/unprocessable_entity/idempotency_key_reused' }, 1, policy)).toBeNull();
    for (const error of [untrusted, redirect, new SyntaxError('Unexpected token'), new TypeError('x is not a function')]) {
      expect(isTransientFailure(error)).toBe(false);
      expect(retryDelayMs({ kind: 'failure', error }, 1, policy)).toBeNull();
    }
  });

  it('gives up after `retries` retries', () => {
    expect(retryDelayMs({ kind: 'failure', error: reset }, 3, policy)).not.toBeNull();
    expect(retryDelayMs({ kind: 'failure', error: reset }, 4, policy)).toBeNull();
    expect(retryDelayMs({ kind: 'failure', error: reset }, 1, retryPolicy({ retries: 0 }))).toBeNull();
  });

  it('backs off exponentially with jitter (at least half of each step), bounded by maxDelayMs', () => {
    const highest = [1, 2, 3].map((attempt) => retryDelayMs({ kind: 'failure', error: reset }, attempt, policy, () => 1));
    const lowest = [1, 2, 3].map((attempt) => retryDelayMs({ kind: 'failure', error: reset }, attempt, policy, () => 0));
    expect(highest).toEqual([100, 200, 400]);
    expect(lowest).toEqual([50, 100, 200]);
    const long = retryPolicy({ retries: 20, minDelayMs: 100, maxDelayMs: 1_000 });
    expect(retryDelayMs({ kind: 'failure', error: reset }, 15, long, () => 1)).toBe(1_000);
  });

  it("waits what the server's Retry-After says, seconds or a date, within maxDelayMs", () => {
    const inFlight = (retryAfter: string | null) => ({ kind: 'answer' as const, status: 409, error: 'x/conflict/idempotency_key_in_flight', retryAfter });
    expect(retryDelayMs(inFlight('1'), 1, policy, () => 0)).toBe(1_000);
    expect(retryDelayMs({ kind: 'answer', status: 503, retryAfter: '0' }, 2, policy, () => 1)).toBe(0);
    expect(retryDelayMs({ kind: 'answer', status: 503, retryAfter: '120' }, 1, policy)).toBe(1_000);
    expect(retryDelayMs(inFlight('soon'), 1, policy, () => 1)).toBe(100);
    const now = Date.parse('2026-11-26T20:00:00Z');
    expect(retryAfterMs('Thu, 26 Nov 2026 20:00:02 GMT', now)).toBe(2_000);
    expect(retryAfterMs('Thu, 26 Nov 2026 19:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(' 3 ', now)).toBe(3_000);
    expect(retryAfterMs(null, now)).toBeNull();
  });

  it('a write gets a random UUID key unless the caller gives one of 1–255 visible ASCII characters', () => {
    const a = idempotencyKeyFor(undefined);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idempotencyKeyFor(undefined)).not.toBe(a);
    expect(idempotencyKeyFor('order-42/send')).toBe('order-42/send');
    expect(idempotencyKeyFor('x'.repeat(255))).toHaveLength(255);
    for (const bad of ['', 'x'.repeat(256), 'with space', 'tab\there', 'é', 'line\n']) {
      expect(() => idempotencyKeyFor(bad)).toThrow(/idempotencyKey must be 1–255 visible ASCII characters/);
    }
  });

  it('checks its options', () => {
    expect(retryPolicy()).toEqual(DEFAULT_RETRY);
    expect(retryPolicy({ retries: 0, timeoutMs: undefined, onRetry: () => undefined })).toEqual({ ...DEFAULT_RETRY, retries: 0 });
    expect(() => retryPolicy({ retries: -1 })).toThrow(/retry.retries must be a whole number/);
    expect(() => retryPolicy({ maxDelayMs: 1.5 })).toThrow(/retry.maxDelayMs/);
    expect(() => retryPolicy({ timeoutMs: 0 })).toThrow(/retry.timeoutMs must be at least 1/);
    expect(() => retryPolicy({ minDelayMs: 10, maxDelayMs: 5 })).toThrow(/minDelayMs must not exceed/);
  });
});

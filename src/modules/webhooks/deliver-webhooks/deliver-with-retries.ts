import type { Agent } from 'node:http';
import { messageOf } from '../../../shared/domain/errors';
import type { OutgoingWebhooks } from '../../../shared/webhooks/outgoing-webhooks';

/** How one event's delivery to one webhook ended. */
export interface DeliveryOutcome {
  readonly delivered: boolean;
  readonly attempts: number;
  /** The receiver's status on the last attempt; null when it gave none (refused target, network error, timeout). */
  readonly responseCode: number | null;
  readonly error?: string;
}

export interface RetryPolicy {
  /** The waits before each retry (WEBHOOK_RETRY_SCHEDULE_MS): attempts = its length + 1. */
  readonly scheduleMs: readonly number[];
  /** WEBHOOK_DELIVERY_TIMEOUT_MS: one attempt's bound. */
  readonly timeoutMs: number;
}

/**
 * POSTs one request until the receiver answers 2xx or the schedule is spent; every attempt
 * sends the same body (`request` is made at each attempt: a Standard Webhooks signature covers
 * the attempt's time, which its verifiers check). Rejects only when `stop` aborts (a webhook changed, the lease was lost,
 * the process stops): the event is then delivered again by whoever delivers next.
 */
export async function deliverWithRetries(
  outgoing: OutgoingWebhooks,
  url: string,
  request: (attemptAt: Date) => { body: string; headers: Record<string, string> },
  policy: RetryPolicy,
  stop: AbortSignal,
  agent?: Agent,
): Promise<DeliveryOutcome> {
  let last: DeliveryOutcome = { delivered: false, attempts: 0, responseCode: null };
  for (let attempt = 1; attempt <= policy.scheduleMs.length + 1; attempt++) {
    if (attempt > 1) await pause(policy.scheduleMs[attempt - 2], stop);
    stop.throwIfAborted();
    const bounded = attemptSignal(stop, policy.timeoutMs);
    try {
      const status = await outgoing.post(url, { ...request(new Date()), signal: bounded.signal, agent });
      if (status >= 200 && status < 300) return { delivered: true, attempts: attempt, responseCode: status };
      last = { delivered: false, attempts: attempt, responseCode: status };
    } catch (error) {
      stop.throwIfAborted();
      last = { delivered: false, attempts: attempt, responseCode: null, error: messageOf(error) };
    } finally {
      bounded.end();
    }
  }
  return last;
}

/**
 * One attempt's signal: aborted by `stop`, or `timeoutMs` after it began (with the reason
 * `AbortSignal.timeout` gives); `end` lets go of both. One controller and one timer, where
 * `AbortSignal.any` with `AbortSignal.timeout` cost a delivery more than its signature.
 */
function attemptSignal(stop: AbortSignal, timeoutMs: number): { signal: AbortSignal; end(): void } {
  const controller = new AbortController();
  const onStop = () => controller.abort(stop.reason);
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timeoutMs);
  return {
    signal: controller.signal,
    end: () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', onStop);
    },
  };
}

/** Waits `ms`, or rejects as soon as `stop` aborts. */
function pause(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (stop.aborted) return reject(stop.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(stop.reason);
    };
    const timer = setTimeout(() => {
      stop.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    stop.addEventListener('abort', onAbort, { once: true });
  });
}

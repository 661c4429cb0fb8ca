import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorResponse } from './errors';
import { InstanceLocator } from './instance-locator';
import { AttemptOutcome, idempotencyKeyFor, RetryOptions, RetryPolicy, retryDelayMs, retryPolicy } from './retries';

/** Where the server is. The originals always used `https://<cluster>.pusherplatform.io:443`; Parley is self-hosted. */
export interface ServerOptions {
  /** Bare host name or address; default `<cluster>.pusherplatform.io`, as the originals. */
  host?: string;
  /** Default 443 with TLS, 80 without. */
  port?: number;
  /** HTTPS (default true). A self-signed certificate is trusted through NODE_EXTRA_CA_CERTS. */
  tls?: boolean;
  /** How failed attempts are retried (a write always with the same `Idempotency-Key`); `{retries: 0}` turns it off. */
  retry?: RetryOptions;
}

export interface ServiceRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below the service base, e.g. `/users/alice` (callers encode path segments). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  token: string;
  /** A write's `Idempotency-Key`, the same for every attempt; default a random UUID per request. */
  idempotencyKey?: string;
}

/**
 * Every write may name its own `Idempotency-Key` (1–255 visible ASCII characters), e.g. an id
 * from the app's own job queue, so that a retry after the library gave up, or after the app
 * itself restarted, is still applied once. Without one, each call gets a random UUID, used for
 * all of that call's retries.
 */
export interface WriteOptions {
  idempotencyKey?: string;
}

type Method = ServiceRequest['method'];

/** One attempt's end: a 2xx answer's text, or what `retryDelayMs` decides on (with the error to reject with). */
type Attempt =
  | { readonly kind: 'ok'; readonly text: string }
  | (Extract<AttemptOutcome, { kind: 'answer' }> & { readonly refusal: ErrorResponse })
  | Extract<AttemptOutcome, { kind: 'failure' }>;

/** One service of one instance, e.g. `/services/chatkit/v6/<instanceId>`, reached with Node's fetch. */
export class ServiceClient {
  private readonly base: string;
  private readonly retry: RetryPolicy;
  private readonly onRetry: RetryOptions['onRetry'];

  constructor(locator: InstanceLocator, service: string, version: string, { host, port, tls = true, retry }: ServerOptions = {}) {
    if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new TypeError(`port must be an integer 1–65535, got ${port}`);
    this.base = `${origin(host ?? `${locator.cluster}.pusherplatform.io`, port, tls)}/services/${service}/${version}/${encodeURIComponent(locator.instanceId)}`;
    this.retry = retryPolicy(retry);
    if (retry?.onRetry !== undefined && typeof retry.onRetry !== 'function') throw new TypeError('retry.onRetry must be a function');
    this.onRetry = retry?.onRetry;
  }

  /**
   * The parsed JSON body of a 2xx answer (undefined when empty); rejects with `ErrorResponse`
   * otherwise, or with the transport's error. Transport failures, timeouts, 503 and 409
   * `idempotency_key_in_flight` are retried (`retryDelayMs`); a write (anything but GET) sends
   * the same `Idempotency-Key` with every attempt, so the server applies it once.
   */
  async request<T>({ method, path, query, body, token, idempotencyKey }: ServiceRequest): Promise<T> {
    const url = new URL(this.base + path);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...(isWrite(method) && { 'idempotency-key': idempotencyKeyFor(idempotencyKey) }),
    };
    const init: RequestInit = { method, headers, body: body === undefined ? undefined : JSON.stringify(body), redirect: 'error' };
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(url, init);
      if (outcome.kind === 'ok') return (outcome.text === '' ? undefined : JSON.parse(outcome.text)) as T;
      const error = outcome.kind === 'answer' ? outcome.refusal : outcome.error;
      const wait = retryDelayMs(outcome, attempt, this.retry);
      if (wait === null) throw error;
      this.onRetry?.({ attempt, delayMs: wait, error });
      await sleep(wait);
    }
  }

  /** One attempt, its whole answer read within the timeout. */
  private async attempt(url: URL, init: RequestInit): Promise<Attempt> {
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(this.retry.timeoutMs) });
      const text = await response.text();
      if (response.ok) return { kind: 'ok', text };
      const refusal = errorResponse(response, text);
      return { kind: 'answer', status: response.status, error: refusal.error, retryAfter: response.headers.get('retry-after'), refusal };
    } catch (error) {
      return { kind: 'failure', error };
    }
  }
}

const isWrite = (method: Method): boolean => method !== 'GET';

function origin(host: string, port: number | undefined, tls: boolean): string {
  if (/^[^:[\]]+:\d*$/.test(host) || /[/?#@\s]/.test(host)) {
    throw new TypeError(`host must be a bare host name or address (give the port as port), got ${JSON.stringify(host)}`);
  }
  const hostname = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host; // an IPv6 address
  return new URL(`${tls ? 'https' : 'http'}://${hostname}${port === undefined ? '' : `:${port}`}`).origin;
}

function errorResponse(response: Response, text: string): ErrorResponse {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  let parsed: { error?: unknown; error_description?: unknown; error_uri?: unknown } = {};
  try {
    parsed = JSON.parse(text) ?? {};
  } catch {
    /* not JSON (a proxy's page): fall back to the status text below */
  }
  const error = typeof parsed.error === 'string' ? parsed.error : `http/${response.status}`;
  const description = typeof parsed.error_description === 'string' ? parsed.error_description : response.statusText || text.slice(0, 200);
  return new ErrorResponse(response.status, headers, error, description, typeof parsed.error_uri === 'string' ? parsed.error_uri : undefined);
}

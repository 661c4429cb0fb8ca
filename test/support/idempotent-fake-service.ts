import { createHash } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * A local HTTP service that speaks Parley's idempotency wire contract (docs/idempotency.md), for
 * testing a client's retries before, and apart from, the real server: a write's
 * `Idempotency-Key` is remembered with its answer, a retry of the same request is answered the
 * same with `Idempotent-Replayed: true`, the same key on another request is 422
 * `…/idempotency_key_reused`, and while the first is still being handled 409
 * `…/idempotency_key_in_flight` with `Retry-After: 1`. Faults, taken one per keyed write in the
 * order queued, make the transport or the service fail as networks and servers do (a read takes
 * one too: `hold` aside, each fails it the same way).
 */
export type Fault =
  /** The connection is cut before the request is handled: nothing changes. */
  | 'reset-before'
  /** The request is handled (the change is made and its answer kept), then the connection is cut: the answer is lost. */
  | 'drop-answer'
  /** 503 with `Retry-After: 0`, nothing changed. */
  | 'unavailable'
  /**
   * The request stays in flight, unanswered, until a retry with its key comes (and is answered
   * 409 in flight); then it completes, its answer kept but sent to no one (the client gave up on it).
   */
  | 'hold';

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly key: string | undefined;
  readonly body: string;
}

export interface AnsweredRequest extends SeenRequest {
  /** The status answered, or null when the connection was cut or the answer went to no one. */
  readonly status: number | null;
  readonly replayed: boolean;
}

export interface FakeService {
  readonly port: number;
  /** Every request, in arrival order, with how it was answered. */
  readonly requests: AnsweredRequest[];
  /** The writes the service applied (once per key), in order. */
  readonly changes: SeenRequest[];
  /** Faults for the next requests (keyed writes and reads), one each. */
  readonly faults: Fault[];
  close(): Promise<void>;
}

/**
 * `answer(change, n)` is the service's answer to the n-th change (from 1), e.g. a send's
 * `{message_id: n}`; the error prefix is the service's (`services/chatkit/`).
 */
/** On `port` when given (a service coming back where it was), else on any free port. */
export async function startFakeService(
  answer: (change: SeenRequest, n: number) => { status: number; body: unknown },
  errorPrefix = 'services/chatkit/',
  port = 0,
): Promise<FakeService> {
  const requests: AnsweredRequest[] = [];
  const changes: SeenRequest[] = [];
  const faults: Fault[] = [];
  const kept = new Map<string, { fingerprint: string; status: number; body: string }>();
  /** Keys being handled, with what completes a held one. */
  const inFlight = new Map<string, (() => void) | null>();

  const send = (res: ServerResponse, seen: SeenRequest, status: number, body: unknown, headers: Record<string, string> = {}, replayed = false) => {
    requests.push({ ...seen, status, replayed });
    res.writeHead(status, { 'content-type': 'application/json', ...headers, ...(replayed && { 'idempotent-replayed': 'true' }) });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const cut = (req: IncomingMessage, seen: SeenRequest) => {
    requests.push({ ...seen, status: null, replayed: false });
    req.socket.destroy();
  };
  const apply = (seen: SeenRequest, fingerprint: string): { status: number; body: string } => {
    changes.push(seen);
    const { status, body } = answer(seen, changes.length);
    const stored = { fingerprint, status, body: JSON.stringify(body) };
    if (seen.key !== undefined && status < 400) kept.set(seen.key, stored);
    return stored;
  };

  const handle = (req: IncomingMessage, res: ServerResponse, text: string) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const header = req.headers['idempotency-key'];
    const key = typeof header === 'string' ? header : undefined;
    const seen: SeenRequest = { method: req.method ?? '', path, key, body: text };
    if (req.method === 'GET') {
      const fault = faults.shift();
      if (fault === 'reset-before' || fault === 'drop-answer') return cut(req, seen);
      if (fault === 'unavailable') return send(res, seen, 503, { error: `${errorPrefix}service_unavailable/try_again`, error_description: 'busy' });
      return send(res, seen, 200, answer(seen, changes.length).body);
    }
    if (key === undefined) {
      const done = apply(seen, '');
      return send(res, seen, done.status, done.body);
    }
    if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
      return send(res, seen, 400, { error: `${errorPrefix}bad_request/invalid_idempotency_key`, error_description: 'bad key' });
    }
    const fingerprint = createHash('sha256').update(`${req.method} ${path} ${text}`).digest('hex');
    const previous = kept.get(key);
    if (previous) {
      if (previous.fingerprint !== fingerprint) {
        return send(res, seen, 422, { error: `${errorPrefix}unprocessable_entity/idempotency_key_reused`, error_description: 'reused' });
      }
      return send(res, seen, previous.status, previous.body, {}, true);
    }
    if (inFlight.has(key)) {
      send(res, seen, 409, { error: `${errorPrefix}conflict/idempotency_key_in_flight`, error_description: 'in flight' }, { 'retry-after': '1' });
      const complete = inFlight.get(key);
      complete?.();
      return;
    }
    const fault = faults.shift();
    if (fault === 'reset-before') return cut(req, seen);
    if (fault === 'unavailable') {
      return send(res, seen, 503, { error: `${errorPrefix}service_unavailable/try_again`, error_description: 'busy' }, { 'retry-after': '0' });
    }
    if (fault === 'hold') {
      inFlight.set(key, () => {
        inFlight.delete(key);
        apply(seen, fingerprint);
        requests.push({ ...seen, status: null, replayed: false });
        req.socket.destroy();
      });
      return;
    }
    const done = apply(seen, fingerprint);
    if (fault === 'drop-answer') return cut(req, seen);
    send(res, seen, done.status, done.body);
  };

  const server: Server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => handle(req, res, text));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    changes,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

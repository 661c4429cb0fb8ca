import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '../shared/domain/errors';
import { toErrorResponse } from '../shared/http/error.filter';

/** What a request hears while the embedded server folds the log before it serves: it was not handled. */
const REFUSED_WHILE_STARTING = new DomainError(
  'unavailable',
  'starting',
  'This server is starting (catching up with the event log): the request was not handled and nothing was changed; send it again',
);
const STARTING_REPORT = JSON.stringify({
  status: 'starting',
  problems: ['catching up with the event log before serving'],
  projections: {},
  live_log: { state: 'following' },
  storage: { state: 'ok' },
});

/** How long a request still arriving when the app takes the port over may take before it is cut. */
const HALF_SENT_GRACE_MS = 1_000;

function answerOf(url: string): [status: number, body: string] {
  const path = url.split('?')[0];
  if (path === '/health/live') return [200, JSON.stringify({ status: 'alive' })];
  if (path === '/health') return [503, STARTING_REPORT];
  const { status, body } = toErrorResponse(REFUSED_WHILE_STARTING, url);
  return [status, JSON.stringify(body)];
}

function answer(request: IncomingMessage, response: ServerResponse): void {
  const [status, body] = answerOf(request.url ?? '/');
  // Answered once the request body is read: closing a socket with unread bytes resets it, and the client never sees the 503.
  request.resume();
  request.once('end', () => {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', connection: 'close', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
}

/** A /ws upgrade while starting: the same 503, as plain HTTP (the SDKs reconnect). */
function refuseUpgrade(request: IncomingMessage, socket: Duplex): void {
  const [, body] = answerOf(request.url ?? '/');
  socket.end(`HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/**
 * The plain HTTP port while the embedded server folds a long log before it serves (a first
 * start or a rebuild takes about a minute per million events): liveness answers 200, readiness
 * 503 `starting`, anything else 503 "nothing was changed". Without it the port stays closed
 * all that time, and an orchestrator's liveness probe restarts the process mid-fold. Closed
 * just before the app listens on the same port.
 */
export async function listenWhileStarting(port: number, host: string): Promise<{ close(): Promise<void> }> {
  const server = createServer(answer);
  server.on('upgrade', refuseUpgrade);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    async close() {
      // Requests that came while the fold held the event loop are read and answered first (one
      // turn through poll); close() then drops idle connections and waits for the answering ones.
      await new Promise((resolve) => setImmediate(resolve));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const cut = setTimeout(() => server.closeAllConnections(), HALF_SENT_GRACE_MS);
      await closed;
      clearTimeout(cut);
    },
  };
}

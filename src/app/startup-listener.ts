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

function answerOf(url: string): [status: number, body: string] {
  const path = url.split('?')[0];
  if (path === '/health/live') return [200, JSON.stringify({ status: 'alive' })];
  if (path === '/health') return [503, STARTING_REPORT];
  const { status, body } = toErrorResponse(REFUSED_WHILE_STARTING, url);
  return [status, JSON.stringify(body)];
}

function answer(request: IncomingMessage, response: ServerResponse): void {
  const [status, body] = answerOf(request.url ?? '/');
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', connection: 'close', 'content-length': Buffer.byteLength(body) });
  response.end(body);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

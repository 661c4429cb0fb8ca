import { createServer, IncomingMessage, request, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * A plain-HTTP reverse proxy to a server on 127.0.0.1 that loses answers on demand: a request
 * that `drop` matches is forwarded whole, the server's whole answer is read (so the server has
 * handled it: the change is made), and then the client's connection is cut instead of
 * answering, as when a mobile network drops between the server's commit and its answer
 * reaching the app. Everything else passes through unchanged.
 */
export interface LostAnswer {
  readonly method: string;
  readonly path: string;
  readonly idempotencyKey: string | undefined;
  readonly status: number;
  readonly body: string;
}

export interface AnswerDroppingProxy {
  readonly port: number;
  /** Answers the server gave that the client never got, in order. */
  readonly lost: LostAnswer[];
  /** Drops the answer of the next request for which `matches(method, path)` holds (once). */
  dropNext(matches: (method: string, path: string) => boolean): void;
  close(): Promise<void>;
}

export async function startAnswerDroppingProxy(targetPort: number): Promise<AnswerDroppingProxy> {
  const lost: LostAnswer[] = [];
  const pending: ((method: string, path: string) => boolean)[] = [];

  const server: Server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://proxy').pathname;
    const index = pending.findIndex((matches) => matches(method, path));
    const dropping = index >= 0;
    if (dropping) pending.splice(index, 1);
    const upstream = request(
      { host: '127.0.0.1', port: targetPort, method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${targetPort}` } },
      (answer: IncomingMessage) => {
        if (!dropping) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const key = req.headers['idempotency-key'];
          lost.push({
            method,
            path,
            idempotencyKey: typeof key === 'string' ? key : undefined,
            status: answer.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
          });
          req.socket.destroy();
        });
      },
    );
    upstream.on('error', () => req.socket.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    lost,
    dropNext: (matches) => void pending.push(matches),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** One POST a receiver got: its exact body and headers, and what it answered. */
export interface ReceivedRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly answered: number;
}

/** What the receiver answers a request with (default 200); `'hang'` never answers; `'reset'` destroys the connection. */
export type Answer = number | 'hang' | 'reset';

/**
 * A local HTTP webhook receiver for tests: records every request in order (raw body, headers)
 * and answers as `answer` says, which a test may change while it runs (down, 500, up again).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  answer: (request: { body: string; headers: IncomingHttpHeaders }) => Answer = () => 200;
  /** How long the receiver takes before it answers (a slower receiver widens the window two senders would overlap in). */
  answerAfterMs = 0;
  /** The most requests it was handling at once. */
  maxInFlight = 0;
  private inFlight = 0;
  private readonly hanging = new Set<import('node:http').ServerResponse>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(port = 0): Promise<WebhookReceiver> {
    let receiver!: WebhookReceiver;
    const server = createServer((req, res) => {
      receiver.maxInFlight = Math.max(receiver.maxInFlight, ++receiver.inFlight);
      res.on('close', () => receiver.inFlight--);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const answer = receiver.answer({ body, headers: req.headers });
        if (answer === 'reset') {
          req.socket.destroy();
          return;
        }
        if (answer === 'hang') {
          receiver.hanging.add(res);
          return;
        }
        const respond = () => {
          receiver.requests.push({ path: req.url ?? '', headers: req.headers, body, answered: answer });
          res.writeHead(answer).end();
        };
        if (receiver.answerAfterMs > 0) setTimeout(respond, receiver.answerAfterMs);
        else respond();
      });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server, (server.address() as AddressInfo).port);
    return receiver;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The bodies of the requests answered 2xx, parsed. */
  delivered(): any[] {
    return this.requests.filter((r) => r.answered >= 200 && r.answered < 300).map((r) => JSON.parse(r.body));
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.socket?.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Whether `request` carries `webhook-signature`, the hex HMAC-SHA1 of its exact body with `secret` (as Chatkit receivers check it). */
export function signedWith(request: ReceivedRequest, secret: string): boolean {
  const expected = Buffer.from(createHmac('sha1', secret).update(request.body).digest('hex'));
  const given = Buffer.from(String(request.headers['webhook-signature'] ?? ''));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

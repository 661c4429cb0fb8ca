import { createHmac } from 'node:crypto';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { eventually, Patience } from './waiting';

/** One request the receiver took, as it arrived, and what it made of it. */
export interface ReceivedWebhook {
  /** The raw body, exactly the bytes sent (as text, the way Chatkit's receivers read it). */
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
  /** Whether the signature verified as the receiver was told to check it. */
  readonly verified: boolean;
  /** The parsed body, when it verified. */
  readonly event?: {
    payload: Record<string, any>;
    metadata: { created_at: string; event_type: string; event_id: string; product: string };
    custom_data: unknown;
  };
  /** The status this receiver answered. */
  readonly status: number;
}

export interface ChatkitWebhookReceiverOptions {
  /** The webhook's secret, as registered. */
  readonly secret: string;
  /** Verify as Standard Webhooks (the standardwebhooks library's own `verify`) rather than Chatkit's hex HMAC-SHA1. */
  readonly standardWebhooks?: boolean;
  /** The status to answer a verified request with (the n-th request, from 0); 200 by default. */
  readonly answer?: (request: number, received: ReceivedWebhook) => number;
}

/**
 * A local webhook receiver that checks a delivery exactly as Chatkit's receivers did: the body
 * read as raw text whatever its content type, `createHmac('sha1', secret).update(body).digest('hex')`
 * compared to the `webhook-signature` header, 401 when it differs, then `JSON.parse(body)` and
 * dispatch on `metadata.event_type` (`GetStream/pusher-chatkit-migration` `webhook/server.js`;
 * Pusher's push-notification receiver). With `standardWebhooks`, `new Webhook(secret).verify(body, headers)`
 * from the `standardwebhooks` package (which refuses a timestamp more than five minutes off).
 */
export class ChatkitWebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private constructor(
    private readonly server: Server,
    /** The receiver's port on 127.0.0.1 (for `WEBHOOK_ALLOWED_HOSTS`). */
    readonly port: number,
    readonly url: string,
  ) {}

  static async start(options: ChatkitWebhookReceiverOptions): Promise<ChatkitWebhookReceiver> {
    let receiver: ChatkitWebhookReceiver | undefined;
    let count = 0;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const verified = req.method === 'POST' && verify(options, body, req.headers);
        const taken: ReceivedWebhook = { body, headers: req.headers, verified, status: 401 };
        const event = verified ? JSON.parse(body) : undefined;
        const status = verified ? (options.answer?.(count++, { ...taken, event }) ?? 200) : 401;
        receiver!.received.push({ ...taken, event, status });
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'OK' : 'No');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new ChatkitWebhookReceiver(server, port, `http://127.0.0.1:${port}/chatkit-webhooks`);
    return receiver;
  }

  /** The verified deliveries answered 2xx (what the receiver accepted), in arrival order. */
  accepted(): ReceivedWebhook[] {
    return this.received.filter((r) => r.verified && r.status < 300);
  }

  /** Waits until an accepted delivery satisfies `match`, and returns it. */
  async delivery(match: (r: ReceivedWebhook) => boolean, patience: Patience = {}): Promise<ReceivedWebhook> {
    return eventually(() => this.accepted().find(match), { what: 'a matching webhook delivery', ...patience });
  }

  /** Waits until an accepted delivery of `eventType` satisfies `match`. */
  async ofType(eventType: string, match: (r: ReceivedWebhook) => boolean = () => true, patience: Patience = {}): Promise<ReceivedWebhook> {
    return this.delivery((r) => r.event?.metadata.event_type === eventType && match(r), { what: `a ${eventType} delivery`, ...patience });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Whether the request is signed as the receiver was told (Chatkit's check or the Standard Webhooks library's). */
export const verify = (options: Pick<ChatkitWebhookReceiverOptions, 'secret' | 'standardWebhooks'>, body: string, headers: IncomingHttpHeaders): boolean => {
  if (options.standardWebhooks) {
    try {
      new Webhook(options.secret).verify(body, headers as Record<string, string>);
      return true;
    } catch {
      return false;
    }
  }
  const signature = createHmac('sha1', options.secret).update(body).digest('hex');
  return signature === headers['webhook-signature'];
};

/**
 * The baseline server's webhook delivery, on a thread of its own as Parley's embedded server
 * delivers on its projector thread: each message the main thread committed is POSTed to every
 * target, in commit order per target, signed as Chatkit signs (hex HMAC-SHA1 of the body), one
 * request at a time per target over a kept-alive connection. A refused or failed delivery is
 * retried after a backoff (doubling from 1 s), so a dead target costs a connection attempt now and
 * then. It keeps no delivery log and no checkpoint on disk: the least work "every message reaches
 * every receiver" takes, which is why it is a floor and not a rival.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { parentPort } from 'node:worker_threads';

interface Committed {
  readonly id: number;
  readonly roomId: string;
  readonly text: string;
  readonly createdAt: string;
}

interface Target {
  readonly url: URL;
  readonly queue: Committed[];
  busy: boolean;
  backoffMs: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let targets: Target[] = [];
let secret = '';

function post(target: Target, body: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.request(
      target.url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'webhook-signature': createHmac('sha1', secret).update(body).digest('hex'),
        },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

async function drain(target: Target): Promise<void> {
  if (target.busy) return;
  target.busy = true;
  while (target.queue.length > 0 && targets.includes(target)) {
    const message = target.queue[0];
    const body = JSON.stringify({
      metadata: { event_id: `m-${message.id}`, event_type: 'v1.messages_created', timestamp: message.createdAt },
      payload: { messages: [{ id: message.id, room_id: message.roomId, parts: [{ type: 'text/plain', content: message.text }], created_at: message.createdAt }] },
    });
    const status = await post(target, body);
    if (status >= 200 && status < 300) {
      target.queue.shift();
      target.backoffMs = 1000;
    } else {
      await new Promise((resolve) => setTimeout(resolve, target.backoffMs));
      target.backoffMs = Math.min(target.backoffMs * 2, 60_000);
    }
  }
  target.busy = false;
}

parentPort!.on('message', (message: { targets?: string[]; secret?: string; committed?: Committed }) => {
  if (message.targets) {
    targets = message.targets.map((url) => ({ url: new URL(url), queue: [], busy: false, backoffMs: 1000 }));
    secret = message.secret ?? '';
    return;
  }
  if (message.committed) {
    for (const target of targets) {
      target.queue.push(message.committed);
      void drain(target);
    }
  }
});

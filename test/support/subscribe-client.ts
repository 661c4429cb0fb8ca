import { WebSocket } from 'ws';
import { sleep } from './waiting';

/**
 * Test clients for the two subscription transports (wire study §3.2, §3.3): HTTP `SUBSCRIBE`
 * with newline-delimited frames, and the @pusher/platform multiplexing WebSocket on /ws.
 * Each keeps the frames it received in a queue read with `next()`; `close()` ends everything
 * it opened (sockets and timers), so tests leave no handles behind.
 */

/** HTTP frames: `[0, padding]` keep-alive, `[1, id, headers, body]` event, `[255, status, headers, body]` end. */
export type HttpFrame = [0, string] | [1, string, Record<string, string>, any] | [255, number, Record<string, string>, any];

/** WebSocket frames from the server, e.g. `[101, subID, status, headers]`, `[102, subID, id, headers, body]`. */
export type WsFrame = any[];

/** A subscription event, as both transports carry it. */
export interface SubscriptionEvent<B = any> {
  readonly id: string;
  readonly headers: Record<string, string>;
  readonly body: B;
}

const DEFAULT_TIMEOUT_MS = 15_000;

/** Frames in arrival order, handed out one by one; once ended, reading past the end rejects. */
export class FrameQueue<F> {
  private readonly frames: F[] = [];
  private readonly waiters: { resolve: (f: F) => void; reject: (e: Error) => void }[] = [];
  private ended: Error | null = null;

  push(frame: F): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(frame);
    else this.frames.push(frame);
  }

  end(reason: Error): void {
    if (this.ended) return;
    this.ended = reason;
    for (const waiter of this.waiters.splice(0)) waiter.reject(reason);
  }

  /** Frames received but not read yet. */
  get pending(): readonly F[] {
    return this.frames;
  }

  next(timeoutMs = DEFAULT_TIMEOUT_MS): Promise<F> {
    if (this.frames.length) return Promise.resolve(this.frames.shift()!);
    if (this.ended) return Promise.reject(this.ended);
    return new Promise<F>((resolve, reject) => {
      const waiter = {
        resolve: (f: F) => {
          clearTimeout(timer);
          resolve(f);
        },
        reject: (e: Error) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`No frame within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Resolves true if nothing arrives within `ms` (the frame, if any, stays queued). */
  async quietFor(ms: number): Promise<boolean> {
    await sleep(ms);
    return this.frames.length === 0;
  }
}

export interface HttpSubscription {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed error body when the status is not 200. */
  readonly body?: any;
  /** The next frame, keep-alives included. */
  next(timeoutMs?: number): Promise<HttpFrame>;
  /** The next event frame (`[1,…]`), skipping keep-alives; an end-of-stream frame rejects. */
  nextEvent<B = any>(timeoutMs?: number): Promise<SubscriptionEvent<B>>;
  /** Resolves true if no event (keep-alives aside) arrives within `ms`. */
  quietFor(ms: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Opens `SUBSCRIBE url` and reads its body line by line as frames. */
export async function openHttpSubscription(url: string, headers: Record<string, string> = {}): Promise<HttpSubscription> {
  const controller = new AbortController();
  const response = await fetch(url, { method: 'SUBSCRIBE', headers, signal: controller.signal });
  const frames = new FrameQueue<HttpFrame>();
  if (response.status !== 200) {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    frames.end(new Error(`SUBSCRIBE answered ${response.status}`));
    return {
      status: response.status,
      headers: response.headers,
      body,
      next: (t) => frames.next(t),
      nextEvent: () => Promise.reject(new Error(`SUBSCRIBE answered ${response.status}`)),
      quietFor: (ms) => frames.quietFor(ms),
      close: async () => undefined,
    };
  }
  const reader = response.body!.getReader();
  const reading = (async () => {
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = text.indexOf('\n')) >= 0) {
        const line = text.slice(0, newline);
        text = text.slice(newline + 1);
        if (line.trim()) frames.push(JSON.parse(line) as HttpFrame);
      }
    }
    frames.end(new Error('The response ended'));
  })().catch((error: Error) => frames.end(error));

  const nextEvent = async <B>(timeoutMs = DEFAULT_TIMEOUT_MS): Promise<SubscriptionEvent<B>> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = await frames.next(Math.max(1, deadline - Date.now()));
      if (frame[0] === 0) continue;
      if (frame[0] === 255) throw new Error(`End of stream ${frame[1]}: ${JSON.stringify(frame[3])}`);
      return { id: frame[1], headers: frame[2], body: frame[3] as B };
    }
  };

  return {
    status: response.status,
    headers: response.headers,
    next: (t) => frames.next(t),
    nextEvent,
    async quietFor(ms) {
      await sleep(ms);
      return frames.pending.every((f) => f[0] === 0);
    },
    async close() {
      controller.abort();
      await reader.cancel().catch(() => undefined);
      await reading;
    },
  };
}

/** `http://host:port` → `ws://host:port/ws` (https → wss). */
export const wsUrlOf = (baseUrl: string): string => baseUrl.replace(/^http/, 'ws').replace(/\/$/, '') + '/ws';

/**
 * One /ws socket that can carry many subscriptions, as @pusher/platform drives it: frames
 * addressed to a subscription are queued per subID, socket-level frames (`[17, …]` pongs,
 * `[99, …]` close) in `control`.
 */
export class WsBridgeClient {
  readonly control = new FrameQueue<WsFrame>();
  private readonly subscriptions = new Map<number, FrameQueue<WsFrame>>();

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as WsFrame;
      const queue = [101, 102, 199].includes(frame[0]) ? this.subscriptions.get(frame[1]) : undefined;
      (queue ?? this.control).push(frame);
    });
    socket.on('close', () => {
      const closed = new Error('The socket closed');
      this.control.end(closed);
      for (const queue of this.subscriptions.values()) queue.end(closed);
    });
  }

  static connect(url: string, headers: Record<string, string> = {}): Promise<WsBridgeClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers });
      socket.once('open', () => resolve(new WsBridgeClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends `[100, subID, path, headers]`; read the OPEN (or EOS) and events from the returned queue. */
  subscribe(subId: number, path: string, headers: Record<string, string> = {}): FrameQueue<WsFrame> {
    const queue = new FrameQueue<WsFrame>();
    this.subscriptions.set(subId, queue);
    this.send([100, subId, path, headers]);
    return queue;
  }

  unsubscribe(subId: number): void {
    this.send([198, subId, null, null]);
    this.subscriptions.get(subId)?.end(new Error('Unsubscribed'));
    this.subscriptions.delete(subId);
  }

  send(frame: unknown[]): void {
    this.socket.send(JSON.stringify(frame));
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.close();
    });
  }
}

export interface WsSubscription {
  /** The status of the OPEN frame (`[101, subID, status, headers]`), or of the EOS that refused it. */
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The EOS body when the subscription was refused. */
  readonly body?: any;
  readonly client: WsBridgeClient;
  /** The next frame for this subscription. */
  next(timeoutMs?: number): Promise<WsFrame>;
  /** The next `[102, subID, id, headers, body]` event; an EOS rejects. */
  nextEvent<B = any>(timeoutMs?: number): Promise<SubscriptionEvent<B>>;
  /** Resolves true if no frame arrives for this subscription within `ms`. */
  quietFor(ms: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Opens a socket on `/ws` of `baseUrl` and one subscription on it; `close()` unsubscribes and closes the socket. */
export async function openWsSubscription(
  baseUrl: string,
  path: string,
  headers: Record<string, string> = {},
  subId = 0,
): Promise<WsSubscription> {
  const client = await WsBridgeClient.connect(wsUrlOf(baseUrl));
  const queue = client.subscribe(subId, path, headers);
  let first: WsFrame;
  try {
    first = await queue.next();
  } catch (error) {
    await client.close();
    throw error;
  }
  const refused = first[0] === 199;
  return {
    status: first[2],
    headers: first[3],
    ...(refused && { body: first[4] }),
    client,
    next: (t) => queue.next(t),
    async nextEvent<B>(timeoutMs?: number) {
      const frame = await queue.next(timeoutMs);
      if (frame[0] !== 102) throw new Error(`Expected an event, got ${JSON.stringify(frame)}`);
      return { id: frame[2], headers: frame[3], body: frame[4] as B };
    },
    quietFor: (ms) => queue.quietFor(ms),
    async close() {
      if (!refused && client.socket.readyState === WebSocket.OPEN) client.unsubscribe(subId);
      await client.close();
    },
  };
}

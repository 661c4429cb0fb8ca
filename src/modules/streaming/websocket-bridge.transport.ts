import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { toErrorResponse } from '../../shared/http/error.filter';
import { bodyJsonOf, EventChannel, MAX_UNSENT_BYTES } from '../../shared/subscriptions/event-channel';
import type { DomainError } from '../../shared/domain/errors';
import { endWithError, OpenStreams } from './http-subscribe.transport';
import { SubscriptionRoutes } from './subscription-routes';

const SUBSCRIBE = 100;
const OPEN = 101;
const EVENT = 102;
const UNSUBSCRIBE = 198;
const EOS = 199;
const PING = 16;
const PONG = 17;
const CLOSE = 99;
/** How long a closing socket's peer gets to answer the close handshake before it is cut. */
const CLOSE_HANDSHAKE_MS = 2_000;

/**
 * The multiplexing WebSocket of @pusher/platform (wire study §3.2) on `/ws`: one socket
 * carries many subscriptions, each opened by `[100, subID, path, headers]` with the token in
 * the frame's headers. Frame arities are exact: the client rejects anything else.
 */
export class WebSocketBridge implements OpenStreams {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 });
  private readonly heartbeat: NodeJS.Timeout;
  /** Each open subscription (on any socket) and its path: what a drain ends. */
  private readonly open = new Map<EventChannel, string>();
  private endingAll: DomainError | null = null;

  constructor(
    private readonly routes: SubscriptionRoutes,
    heartbeatMs = 30_000,
  ) {
    this.wss.on('connection', (socket) => this.serve(socket));
    // A socket that stops answering protocol pings is dead: end its subscriptions.
    this.heartbeat = setInterval(() => {
      for (const socket of this.wss.clients) {
        const s = socket as WebSocket & { alive?: boolean };
        if (s.alive === false) {
          s.terminate();
          continue;
        }
        s.alive = false;
        s.ping();
      }
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  /** Takes over upgrade requests for /ws on an HTTP or HTTPS server. */
  attach(server: Server): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      if ((request.url ?? '').split('?')[0] !== '/ws') {
        socket.destroy();
        return;
      }
      if (this.endingAll) {
        socket.end('HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      this.wss.handleUpgrade(request, socket, head, (ws) => this.wss.emit('connection', ws, request));
    });
  }

  /**
   * Ends every subscription with an EOS frame carrying `reason` (a 503 makes the SDKs
   * resubscribe after their retry delay), and answers new ones with it. Sockets stay open:
   * closing them would make the clients reconnect at once, in a loop, to a draining server.
   */
  endAll(reason: DomainError): void {
    this.endingAll = reason;
    for (const [channel, path] of this.open) endWithError(channel, reason, path);
  }

  /** Closes every socket (going away), cutting those whose peer does not answer in time. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    const closed = [...this.wss.clients].map(
      (socket) =>
        new Promise<void>((resolve) => {
          if (socket.readyState === WebSocket.CLOSED) return resolve();
          const cut = setTimeout(() => socket.terminate(), CLOSE_HANDSHAKE_MS);
          socket.once('close', () => {
            clearTimeout(cut);
            resolve();
          });
          socket.close(1001, 'server shutting down');
        }),
    );
    await Promise.all(closed);
    await new Promise((resolve) => this.wss.close(() => resolve(undefined)));
  }

  private serve(socket: WebSocket & { alive?: boolean }): void {
    const subscriptions = new Map<number, EventChannel | 'opening'>();
    /** A frame as an array, or already as JSON text. */
    const send = (frame: unknown[] | string) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      // A client that stopped reading is let go rather than buffered for without bound.
      if (socket.bufferedAmount > MAX_UNSENT_BYTES) {
        socket.terminate();
        return;
      }
      socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
    };
    socket.alive = true;
    socket.on('pong', () => (socket.alive = true));
    socket.on('close', () => {
      for (const channel of subscriptions.values()) if (channel !== 'opening') channel.close();
      subscriptions.clear();
    });
    socket.on('message', (data) => {
      socket.alive = true;
      let frame: unknown;
      try {
        frame = JSON.parse(String(data));
      } catch {
        frame = null;
      }
      if (!Array.isArray(frame) || typeof frame[0] !== 'number') {
        send([CLOSE, 400, {}, { error: 'bad_request/invalid_frame', error_description: 'Frames are JSON arrays' }]);
        socket.close(1002);
        return;
      }
      const [type, id] = frame as [number, unknown];
      switch (type) {
        case PING:
          send([PONG, id]);
          return;
        case PONG:
          return;
        case UNSUBSCRIBE: {
          const channel = subscriptions.get(id as number);
          subscriptions.delete(id as number);
          if (channel && channel !== 'opening') channel.close();
          return;
        }
        case SUBSCRIBE:
          void this.subscribe(id as number, frame[2], frame[3], subscriptions, send);
          return;
        default:
          return; // unknown frame types are ignored, as the client ignores unknown ids
      }
    });
  }

  private async subscribe(
    id: number,
    path: unknown,
    headers: unknown,
    subscriptions: Map<number, EventChannel | 'opening'>,
    send: (frame: unknown[] | string) => void,
  ): Promise<void> {
    if (typeof id !== 'number' || subscriptions.has(id)) return;
    if (typeof path !== 'string') {
      send([EOS, id, 400, {}, { error: 'bad_request/invalid_path', error_description: 'The path must be a string' }]);
      return;
    }
    if (this.endingAll) {
      const { status, body } = toErrorResponse(this.endingAll, path);
      send([EOS, id, status, {}, body]);
      return;
    }
    subscriptions.set(id, 'opening');
    let channel: EventChannel;
    try {
      channel = await this.routes.open({
        url: path,
        headers: headers && typeof headers === 'object' ? (headers as Record<string, unknown>) : {},
      });
    } catch (error) {
      if (subscriptions.get(id) === 'opening') {
        subscriptions.delete(id);
        const { status, body } = toErrorResponse(error, path);
        send([EOS, id, status, {}, body]);
      }
      return;
    }
    if (subscriptions.get(id) !== 'opening') {
      channel.close(); // unsubscribed, or the socket closed, while opening
      return;
    }
    subscriptions.set(id, channel);
    send([OPEN, id, 200, {}]);
    channel.drainTo(
      // Built as text so that a body shared by many subscribers is serialised once.
      (event) => send(`[${EVENT},${id},${JSON.stringify(event.id)},${JSON.stringify(event.headers ?? {})},${bodyJsonOf(event)}]`),
      (eos) => {
        if (subscriptions.get(id) !== channel) return;
        subscriptions.delete(id);
        send([EOS, id, eos.status, {}, eos.body]);
        channel.close();
      },
    );
    this.open.set(channel, path);
    channel.onClose(() => this.open.delete(channel));
    if (this.endingAll) endWithError(channel, this.endingAll, path); // opened while the server drains
  }
}

import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { toErrorResponse } from '../../shared/http/error.filter';
import { SubscriptionEnd, WebSocketAccessLog } from '../../shared/http/access-log';
import { REQUEST_ID_HEADER, requestIdOf } from '../../shared/http/request-id';
import { EventChannel, writeAllQueued } from '../../shared/subscriptions/event-channel';
import type { DomainError } from '../../shared/domain/errors';
import { OpenStreams, OpenStreamSet } from './open-streams';
import { SocketOutbox } from './socket-outbox';
import { closeFrame, endOfStreamFrame, eventFrame, MessageType, openFrame, parseClientMessage, pongFrame } from './multiplex-frames';
import { SubscriptionRoutes } from './subscription-routes';
import type { SubscriptionOrigin } from './subscription-caps';
import { countOpenStreams } from '../../shared/observability/metrics';

/** How long a closing socket's peer gets to answer the close handshake before it is cut. */
const CLOSE_HANDSHAKE_MS = 2_000;

/** One /ws connection, as its access-log lines name it. */
interface Connection {
  readonly requestId: string;
  /** The socket and client address, which the caps on open subscriptions count. */
  readonly origin: SubscriptionOrigin;
  /** Subscriptions opened on it so far. */
  opened: number;
  /** Why each of its subscriptions is ending, set just before its channel closes. */
  readonly ending: WeakMap<EventChannel, SubscriptionEnd>;
}

/**
 * The multiplexing WebSocket of @pusher/platform (wire study §3.2) on `/ws`: one socket
 * carries many subscriptions, each opened by `[100, subID, path, headers]` with the token in
 * the frame's headers. This class serves the connections and their subscriptions; the
 * messages are written in multiplex-frames.ts, framed in ws-frames.ts and sent by socket-outbox.ts.
 */
export class WebSocketBridge implements OpenStreams {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 });
  private readonly heartbeat: NodeJS.Timeout;
  /** Each open subscription (on any socket) and its path: what a drain ends. */
  private readonly open = new OpenStreamSet();
  private readonly uncount = countOpenStreams('ws', () => ({ sockets: this.wss.clients.size, subscriptions: this.open.size }));
  /** Each upgrade request's id: echoed on the 101 answer and named by every access-log line of its connection. */
  private readonly requestIds = new WeakMap<IncomingMessage, string>();

  private readonly accessLog: WebSocketAccessLog | null;
  private readonly clientAddress: (request: IncomingMessage) => string;

  constructor(
    private readonly routes: SubscriptionRoutes,
    options: {
      /** Where connections and their subscriptions are logged. */
      readonly accessLog?: WebSocketAccessLog;
      /** The client address of an upgrade request (TRUST_PROXY), which caps on anonymous subscriptions count. */
      readonly clientAddress?: (request: IncomingMessage) => string;
      readonly heartbeatMs?: number;
    } = {},
  ) {
    this.accessLog = options.accessLog ?? null;
    this.clientAddress = options.clientAddress ?? ((request) => request.socket.remoteAddress ?? '');
    const heartbeatMs = options.heartbeatMs ?? 30_000;
    this.wss.on('headers', (headers, request) => headers.push(`${REQUEST_ID_HEADER}: ${this.requestIdOf(request)}`));
    this.wss.on('connection', (socket, request) => this.serve(socket, this.requestIdOf(request), this.clientAddress(request)));
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

  /** The id of an upgrade request: the client's X-Request-Id when acceptable, as for HTTP requests. */
  private requestIdOf(request: IncomingMessage): string {
    let id = this.requestIds.get(request);
    if (id === undefined) this.requestIds.set(request, (id = requestIdOf(request)));
    return id;
  }

  /** Takes over upgrade requests for /ws on an HTTP or HTTPS server; `originAllowed` refuses other pages' (403). */
  attach(server: Server, originAllowed: (request: IncomingMessage) => boolean = () => true): void {
    server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Node removes its own 'error' listener from an upgraded socket: a reset while refusing would end the process.
      socket.on('error', () => socket.destroy());
      if ((request.url ?? '').split('?')[0] !== '/ws') {
        socket.destroy();
        return;
      }
      const refuse = (status: number, answer: string) => {
        this.accessLog?.connection({ req_id: this.requestIdOf(request), status, duration_ms: 0, subscriptions: 0 });
        socket.end(answer);
      };
      if (!originAllowed(request)) {
        const body = JSON.stringify({ error: 'forbidden/origin_not_allowed', error_description: `The origin ${request.headers.origin} may not open /ws (CORS_ORIGINS)` });
        refuse(403, `HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        return;
      }
      if (this.open.ending) {
        refuse(503, 'HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
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
    this.open.endAll(reason); // the sockets may close right after: the end-of-stream frames go now
  }

  /** Closes every socket (going away), cutting those whose peer does not answer in time. */
  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.uncount();
    writeAllQueued(); // what the subscriptions were sent goes before the close frames
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

  private serve(socket: WebSocket & { alive?: boolean }, requestId: string, address: string): void {
    const connectedAt = performance.now();
    const connection: Connection = { requestId, origin: { connection: socket, address }, opened: 0, ending: new WeakMap() };
    const subscriptions = new Map<number, EventChannel | 'opening'>();
    const outbox = new SocketOutbox(socket);
    /** A whole WebSocket frame, queued for the socket's next turn. */
    const send = (frame: Buffer) => {
      if (socket.readyState === WebSocket.OPEN) outbox.push(frame);
    };
    socket.alive = true;
    // ws reports a frame it refuses (over maxPayload, not UTF-8, a bad opcode) as 'error' after
    // sending the close code itself; unheard, that error would end the process.
    socket.on('error', () => undefined);
    socket.on('pong', () => (socket.alive = true));
    socket.on('close', (code) => {
      for (const channel of subscriptions.values()) {
        if (channel === 'opening') continue;
        connection.ending.set(channel, { by: 'socket' });
        channel.close();
      }
      subscriptions.clear();
      this.accessLog?.connection({ req_id: requestId, status: 101, duration_ms: performance.now() - connectedAt, subscriptions: connection.opened, close_code: code });
    });
    socket.on('message', (data) => {
      socket.alive = true;
      const message = parseClientMessage(data);
      if (!message) {
        send(closeFrame(400, { error: 'bad_request/invalid_frame', error_description: 'Frames are JSON arrays' }));
        outbox.writeQueued(); // before the close frame
        socket.close(1002);
        return;
      }
      const [type, id] = message;
      switch (type) {
        case MessageType.PING:
          send(pongFrame(id));
          return;
        case MessageType.PONG:
          return;
        case MessageType.UNSUBSCRIBE: {
          const channel = subscriptions.get(id as number);
          subscriptions.delete(id as number);
          if (channel && channel !== 'opening') {
            connection.ending.set(channel, { by: 'client' });
            channel.close();
          }
          return;
        }
        case MessageType.SUBSCRIBE:
          void this.subscribe(id as number, message[2], message[3], subscriptions, send, connection);
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
    send: (frame: Buffer) => void,
    connection: Connection,
  ): Promise<void> {
    if (typeof id !== 'number' || subscriptions.has(id)) return;
    const requestedAt = performance.now();
    const route = typeof path === 'string' ? this.routes.routeOf(path) : 'unmatched';
    const line = { req_id: connection.requestId, sub_id: id, route, path: typeof path === 'string' ? path : '' };
    /** Ends the subscription before it opened, with the status its end-of-stream frame carries. */
    const refuse = (status: number, body: unknown) => {
      send(endOfStreamFrame(id, status, body));
      this.accessLog?.subscriptionOpened({ ...line, status, duration_ms: performance.now() - requestedAt });
    };
    if (typeof path !== 'string') {
      refuse(400, { error: 'bad_request/invalid_path', error_description: 'The path must be a string' });
      return;
    }
    if (this.open.ending) {
      const { status, body } = toErrorResponse(this.open.ending, path);
      refuse(status, body);
      return;
    }
    subscriptions.set(id, 'opening');
    let channel: EventChannel;
    try {
      channel = await this.routes.open({
        url: path,
        headers: headers && typeof headers === 'object' ? (headers as Record<string, unknown>) : {},
        origin: connection.origin,
      });
    } catch (error) {
      if (subscriptions.get(id) === 'opening') {
        subscriptions.delete(id);
        const { status, body } = toErrorResponse(error, path);
        refuse(status, body);
      }
      return;
    }
    if (subscriptions.get(id) !== 'opening') {
      channel.close(); // unsubscribed, or the socket closed, while opening
      return;
    }
    subscriptions.set(id, channel);
    send(openFrame(id));
    connection.opened++;
    const openedAt = performance.now();
    this.accessLog?.subscriptionOpened({ ...line, status: 200, duration_ms: openedAt - requestedAt });
    channel.onClose(() =>
      this.accessLog?.subscriptionClosed({ ...line, duration_ms: performance.now() - openedAt, end: connection.ending.get(channel) ?? { by: 'socket' } }),
    );
    channel.drainTo(
      (event) => send(eventFrame(event, id)),
      (eos) => {
        if (subscriptions.get(id) !== channel) return;
        subscriptions.delete(id);
        send(endOfStreamFrame(id, eos.status, eos.body));
        connection.ending.set(channel, { by: 'server', status: eos.status });
        channel.close();
      },
    );
    this.open.add(channel, path); // ended at once if the server began to drain while it opened
  }
}

import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { toErrorResponse } from '../../shared/http/error.filter';
import { SubscriptionEnd, WebSocketAccessLog } from '../../shared/http/access-log';
import { REQUEST_ID_HEADER, requestIdOf } from '../../shared/http/request-id';
import {
  encodeSharedOnce,
  EventChannel,
  eventFieldsJson,
  MAX_UNSENT_BYTES,
  QueuedFrames,
  queueTurn,
  WireEvent,
  writeAllQueued,
} from '../../shared/subscriptions/event-channel';
import type { DomainError } from '../../shared/domain/errors';
import { endWithError, OpenStreams } from './http-subscribe.transport';
import { SubscriptionRoutes } from './subscription-routes';
import type { SubscriptionOrigin } from './subscription-caps';
import { countOpenStreams } from '../../shared/observability/metrics';

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
 * An event frame's bytes after `[102,<subID>` — the same for every subscription it goes to —
 * and the whole WebSocket frames built from it, by subscription id. A live message fanned out
 * to a thousand sockets is serialised once and framed once per distinct subscription id.
 */
interface EncodedEvent {
  readonly tail: Buffer;
  readonly frames: Map<number, Buffer>;
}

const encodeEvent = encodeSharedOnce<EncodedEvent>((event) => ({
  tail: Buffer.from(`,${eventFieldsJson(event)}]`),
  frames: new Map(),
}));

/** The WebSocket frame carrying `event` to subscription `subId`. */
function eventFrame(event: WireEvent, subId: number): Buffer {
  const encoded = encodeEvent(event);
  let frame = encoded.frames.get(subId);
  if (!frame) {
    frame = textFrame(`[${EVENT},${subId}`, encoded.tail);
    if (event.shared) encoded.frames.set(subId, frame);
  }
  return frame;
}

/** A whole text frame as a server sends it (FIN set, unmasked: RFC 6455 §5.2): `head` (ASCII), then `tail`. */
function textFrame(head: string, tail: Buffer): Buffer {
  const length = head.length + tail.length;
  const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81;
  if (length < 126) {
    frame[1] = length;
  } else if (length < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.write(head, headerLength, 'latin1');
  tail.copy(frame, headerLength + head.length);
  return frame;
}

/** The payload of a frame built by `textFrame`. */
const payloadOf = (frame: Buffer): Buffer => frame.subarray(frame[1] === 126 ? 4 : frame[1] === 127 ? 10 : 2);

/** What ws 8 keeps of a connection beyond its typings: the socket and its Sender's state. */
interface WsInternals {
  readonly _socket?: { write(chunk: Buffer): boolean } | null;
  readonly _sender?: { readonly _state?: number; readonly _queue?: readonly unknown[]; readonly _firstFragment?: boolean } | null;
}

/** A control frame (open, end of stream, pong…) as a whole WebSocket frame. */
const controlFrame = (frame: unknown[]): Buffer => textFrame('', Buffer.from(JSON.stringify(frame)));

/**
 * The frames queued for one socket, written when its turn comes (see `queueTurn`): straight
 * to the socket under ws, one write per turn however many frames wait, where ws.send would
 * frame a copy and write header and payload as two buffers. Straight only while
 * ws's Sender is idle (not compressing, nothing queued, no fragmented message open), so that
 * frames keep their order; otherwise ws sends the payload itself.
 */
class SocketOutbox implements QueuedFrames {
  private frames: Buffer[] = [];

  constructor(private readonly ws: WebSocket) {}

  push(frame: Buffer): void {
    if (this.frames.push(frame) === 1) queueTurn(this);
  }

  writeQueued(): void {
    const frames = this.frames;
    if (frames.length === 0) return;
    this.frames = [];
    const ws = this.ws;
    if (ws.readyState !== WebSocket.OPEN) return;
    // A client that stopped reading is let go rather than buffered for without bound.
    if (ws.bufferedAmount > MAX_UNSENT_BYTES) {
      ws.terminate();
      return;
    }
    const { _socket: socket, _sender: sender } = ws as unknown as WsInternals;
    const direct = socket && sender && sender._state === 0 && sender._queue?.length === 0 && sender._firstFragment === true;
    if (!direct) {
      for (const frame of frames) ws.send(payloadOf(frame), { binary: false });
    } else {
      // Frames that waited together go as one buffer: one write, where cork/uncork makes a writev of many.
      socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    }
  }
}

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
 * the frame's headers. Frame arities are exact: the client rejects anything else.
 */
export class WebSocketBridge implements OpenStreams {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 });
  private readonly heartbeat: NodeJS.Timeout;
  /** Each open subscription (on any socket) and its path: what a drain ends. */
  private readonly open = new Map<EventChannel, string>();
  private endingAll: DomainError | null = null;
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
      if (this.endingAll) {
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
    this.endingAll = reason;
    for (const [channel, path] of this.open) endWithError(channel, reason, path);
    writeAllQueued(); // the sockets may close right after: the end-of-stream frames go now
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
    /** A control frame as an array, or an event's whole WebSocket frame, queued for the socket's next turn. */
    const send = (frame: unknown[] | Buffer) => {
      if (socket.readyState === WebSocket.OPEN) outbox.push(Array.isArray(frame) ? controlFrame(frame) : frame);
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
      let frame: unknown;
      try {
        frame = JSON.parse(String(data));
      } catch {
        frame = null;
      }
      if (!Array.isArray(frame) || typeof frame[0] !== 'number') {
        send([CLOSE, 400, {}, { error: 'bad_request/invalid_frame', error_description: 'Frames are JSON arrays' }]);
        outbox.writeQueued(); // before the close frame
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
          if (channel && channel !== 'opening') {
            connection.ending.set(channel, { by: 'client' });
            channel.close();
          }
          return;
        }
        case SUBSCRIBE:
          void this.subscribe(id as number, frame[2], frame[3], subscriptions, send, connection);
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
    send: (frame: unknown[] | Buffer) => void,
    connection: Connection,
  ): Promise<void> {
    if (typeof id !== 'number' || subscriptions.has(id)) return;
    const requestedAt = performance.now();
    const route = typeof path === 'string' ? this.routes.routeOf(path) : 'unmatched';
    const line = { req_id: connection.requestId, sub_id: id, route, path: typeof path === 'string' ? path : '' };
    /** Ends the subscription before it opened, with the status its end-of-stream frame carries. */
    const refuse = (status: number, body: unknown) => {
      send([EOS, id, status, {}, body]);
      this.accessLog?.subscriptionOpened({ ...line, status, duration_ms: performance.now() - requestedAt });
    };
    if (typeof path !== 'string') {
      refuse(400, { error: 'bad_request/invalid_path', error_description: 'The path must be a string' });
      return;
    }
    if (this.endingAll) {
      const { status, body } = toErrorResponse(this.endingAll, path);
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
    send([OPEN, id, 200, {}]);
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
        send([EOS, id, eos.status, {}, eos.body]);
        connection.ending.set(channel, { by: 'server', status: eos.status });
        channel.close();
      },
    );
    this.open.set(channel, path);
    channel.onClose(() => this.open.delete(channel));
    if (this.endingAll) endWithError(channel, this.endingAll, path); // opened while the server drains
  }
}

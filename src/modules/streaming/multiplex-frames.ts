import { encodeSharedOnce, eventFieldsJson, WireEvent } from '../../shared/subscriptions/event-channel';
import { controlFrame, textFrame } from './ws-frames';

/**
 * The messages of @pusher/platform's multiplexing WebSocket (wire study §3.2), each a JSON
 * array whose first element is its type. Arities are exact: the client rejects anything else.
 */
export const MessageType = {
  /** client → server `[100, subID, path, headers]` */
  SUBSCRIBE: 100,
  /** server → client `[101, subID, status, headers]` */
  OPEN: 101,
  /** server → client `[102, subID, eventID, headers, body]` */
  EVENT: 102,
  /** client → server `[198, subID, …]` */
  UNSUBSCRIBE: 198,
  /** server → client `[199, subID, status, headers, body]` */
  EOS: 199,
  /** either way `[16, id]`, answered by `[17, id]` */
  PING: 16,
  PONG: 17,
  /** server → client `[99, status, headers, body]`, before the socket closes */
  CLOSE: 99,
} as const;

/** A message from the client: its type and first field (a subscription or ping id), then the rest. */
export type ClientMessage = [type: number, id: unknown, ...rest: unknown[]];

/** The message a client frame carries, or null when it is not a JSON array that starts with a number. */
export function parseClientMessage(data: Buffer | ArrayBuffer | Buffer[] | string): ClientMessage | null {
  let message: unknown;
  try {
    message = JSON.parse(String(data));
  } catch {
    return null;
  }
  return Array.isArray(message) && typeof message[0] === 'number' ? (message as ClientMessage) : null;
}

export const openFrame = (subId: number): Buffer => controlFrame([MessageType.OPEN, subId, 200, {}]);

export const endOfStreamFrame = (subId: number, status: number, body: unknown): Buffer => controlFrame([MessageType.EOS, subId, status, {}, body]);

export const pongFrame = (id: unknown): Buffer => controlFrame([MessageType.PONG, id]);

export const closeFrame = (status: number, body: unknown): Buffer => controlFrame([MessageType.CLOSE, status, {}, body]);

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
export function eventFrame(event: WireEvent, subId: number): Buffer {
  const encoded = encodeEvent(event);
  let frame = encoded.frames.get(subId);
  if (!frame) {
    frame = textFrame(`[${MessageType.EVENT},${subId}`, encoded.tail);
    if (event.shared) encoded.frames.set(subId, frame);
  }
  return frame;
}

import { WebSocket } from 'ws';
import { MAX_UNSENT_BYTES, QueuedFrames, queueTurn } from '../../shared/subscriptions/event-channel';
import { payloadOf } from './ws-frames';

/**
 * What ws keeps of a connection beyond its typings: the socket under it, and its Sender's
 * state. `ws` is pinned to `~8.23` in package.json because of these fields; socket-outbox.spec.ts
 * checks their names and meaning on a real connection, so an upgrade that changes them fails there.
 */
interface WsInternals {
  readonly _socket?: { write(chunk: Buffer): boolean } | null;
  readonly _sender?: {
    /** 0 while the Sender is idle; 1 while it compresses a message, 2 while it reads a Blob's bytes. */
    readonly _state?: number;
    /** Sends waiting for the Sender to be idle again. */
    readonly _queue?: readonly unknown[];
    /** False while a fragmented message is open (its next frame would be a continuation). */
    readonly _firstFragment?: boolean;
  } | null;
}

/**
 * The socket under `ws` when a frame written to it now lands after everything ws sent and
 * before anything ws sends next: its Sender is idle (not compressing, not reading a Blob,
 * nothing queued, no fragmented message open). Null otherwise, and for a socket not open.
 */
export function idleSocketOf(ws: WebSocket): { write(chunk: Buffer): boolean } | null {
  const { _socket: socket, _sender: sender } = ws as unknown as WsInternals;
  const idle = socket && sender && sender._state === 0 && sender._queue?.length === 0 && sender._firstFragment === true;
  return idle ? socket : null;
}

/**
 * The frames queued for one socket, written when its turn comes (see `queueTurn`): straight
 * to the socket under ws, one write per turn however many frames wait, where ws.send would
 * frame a copy and write header and payload as two buffers. Straight only while ws's Sender
 * is idle, so that frames keep their order; otherwise ws sends the payload itself.
 */
export class SocketOutbox implements QueuedFrames {
  private frames: Buffer[] = [];

  constructor(private readonly ws: WebSocket) {}

  /** Queues a whole text frame (see `textFrame`) for the socket's next turn. */
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
    const socket = idleSocketOf(ws);
    if (!socket) {
      for (const frame of frames) ws.send(payloadOf(frame), { binary: false });
    } else {
      // Frames that waited together go as one buffer: one write, where cork/uncork makes a writev of many.
      socket.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    }
  }
}

import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

/**
 * How much of a body the server still reads, and throws away, after it has decided to refuse
 * the request (too large, rate limited, unauthorized…): enough that a client which writes a
 * whole 12 MB body before it reads reads the answer. Past it the answer goes out and the
 * connection is closed under the client, which then sees a reset instead.
 */
export const UNREAD_BODY_DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/** The bodies being read after their request was refused. */
export interface UnreadBodies {
  /** Stops reading them (the server shuts down): their answers go now and their connections close. */
  stopWaiting(): void;
}

/**
 * Answers a request refused before its body was read only once that body has arrived, up to
 * `limitBytes` of it, read and thrown away. A client that sends a body too large to take
 * (fetch, curl, the SDKs) writes it whole before reading, and Node closes a connection whose
 * request it did not read with a reset: the client got EPIPE or ECONNRESET and never read the
 * 413 (or the Beams 400, the 429, the 401) meant for it. A body announced larger than the
 * limit is not waited for: it is answered at once, and the connection closed after it. The
 * wait is bounded in time by REQUEST_TIMEOUT_MS, which covers the whole body's arrival.
 */
export function registerUnreadBodyDrain(fastify: FastifyInstance, limitBytes = UNREAD_BODY_DRAIN_LIMIT_BYTES): UnreadBodies {
  const reading = new Set<() => void>();
  let stopped = false;
  fastify.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw;
    if (raw.complete || raw.destroyed) return payload;
    const announced = Number(raw.headers['content-length']);
    const waits = !stopped && (announced <= limitBytes || Number.isNaN(announced));
    const whole = waits ? await bodyReadAndDropped(raw, limitBytes, reading) : false;
    // The rest of the body is never read: the connection cannot carry another request.
    if (!whole) void reply.header('connection', 'close');
    return payload;
  });
  return {
    stopWaiting() {
      stopped = true;
      for (const stop of reading) stop();
    },
  };
}

/**
 * Reads what is left of `raw`'s body into nothing: true once it has all arrived, false when it
 * went (the client closed, the request timed out), ran past `limitBytes` or was given up
 * (through the stop function it adds to `reading` while it reads).
 */
function bodyReadAndDropped(raw: IncomingMessage, limitBytes: number, reading: Set<() => void>): Promise<boolean> {
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      raw.off('data', count);
      raw.off('end', done);
      raw.off('close', done);
      raw.off('error', done);
      reading.delete(done);
      resolve(raw.complete);
    };
    const count = (chunk: Buffer) => {
      read += chunk.length;
      if (read > limitBytes) done();
    };
    reading.add(done);
    raw.on('data', count);
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    // A reader that gave up on the body (a parser past its limit, an upload's stream) may still be piped.
    raw.unpipe();
    raw.resume();
  });
}

import { connect } from 'node:net';

/** What a client that writes its whole body before reading got back. */
export interface WholeBodyAnswer {
  readonly status: number;
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The answer's body parsed as JSON (undefined when it is not JSON). */
  readonly json: any;
  /** Body bytes the socket took from the client (chunk framing aside). */
  readonly written: number;
  /** The socket's error, if any (EPIPE, ECONNRESET: the server cut the connection under the client). */
  readonly socketError?: string;
}

/**
 * A request as fetch, curl and the SDKs send a large body: the whole body is written (with
 * Content-Length, or chunked), then the answer read. Raw TCP, so that nothing between the test
 * and the server hides a reset. Resolves once the answer has arrived whole and the body has been
 * written, or once the socket is gone.
 */
export function sendWholeBody(
  port: number,
  request: {
    method?: string;
    path: string;
    headers?: Record<string, string>;
    /** Body bytes: `before`, then filler, then `after`, `size` in all. */
    size: number;
    chunked?: boolean;
    before?: string;
    after?: string;
  },
): Promise<WholeBodyAnswer> {
  const { method = 'POST', path, headers = {}, size, chunked = false } = request;
  const before = Buffer.from(request.before ?? '');
  const after = Buffer.from(request.after ?? '');
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let written = 0;
    let allWritten = false;
    let socketError: string | undefined;
    let settled = false;

    const answer = (): Omit<WholeBodyAnswer, 'written' | 'socketError'> | null => {
      const bytes = Buffer.concat(received);
      const end = bytes.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
      const fields: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = bytes.subarray(end + 4);
      const length = Number(fields['content-length'] ?? NaN);
      if (!Number.isNaN(length) && body.length < length) return null;
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      return { status: Number(statusLine.split(' ')[1]), headers: fields, json };
    };
    const settle = (force: boolean) => {
      if (settled) return;
      const got = answer();
      if (!force && (!got || !allWritten)) return;
      settled = true;
      socket.destroy();
      resolve({ status: got?.status ?? 0, headers: got?.headers ?? {}, json: got?.json, written, ...(socketError && { socketError }) });
    };

    socket.on('data', (chunk) => {
      received.push(chunk);
      settle(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => (socketError ??= error.code ?? error.message));
    socket.on('close', () => settle(true));
    socket.on('connect', () => {
      const framing = chunked ? 'transfer-encoding: chunked' : `content-length: ${size}`;
      const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
      socket.write(`${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${head}${framing}\r\n\r\n`);
      const piece = Buffer.alloc(64 * 1024, 'a');
      // Called once the socket has taken the last byte: a server that cut the connection fails it first.
      const lastWritten = (error?: Error | null) => {
        if (error) return;
        allWritten = true;
        settle(false);
      };
      const pump = () => {
        while (written < size) {
          const n = Math.min(piece.length, size - written);
          // The filler, with `before` over its first bytes and `after` over its last.
          const bytes = Buffer.from(piece.subarray(0, n));
          if (written < before.length) before.copy(bytes, 0, written);
          const afterStart = size - after.length;
          if (written + n > afterStart) after.copy(bytes, Math.max(0, afterStart - written), Math.max(0, written - afterStart));
          const data = chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]) : bytes;
          written += n;
          const last = written === size && !chunked;
          if (!socket.write(data, last ? lastWritten : undefined)) return void socket.once('drain', pump);
        }
        if (chunked) socket.write('0\r\n\r\n', lastWritten);
      };
      pump();
    });
  });
}

import { ClientHttp2Session, connect, constants, IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http2';

export interface Http2Response {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Requests to one HTTPS origin over a single HTTP/2 connection, reopened when it closes or
 * fails (APNs requires HTTP/2 and asks for long-lived connections; FCM multiplexes on it).
 */
export class Http2Origin {
  private session: ClientHttp2Session | null = null;

  constructor(
    readonly origin: string,
    private readonly timeoutMs: number,
  ) {}

  request(method: string, path: string, headers: OutgoingHttpHeaders, body?: string): Promise<Http2Response> {
    return new Promise((resolve, reject) => {
      const session = this.connection();
      const stream = session.request({ ':method': method, ':path': path, ...headers });
      const chunks: Buffer[] = [];
      let status = 0;
      let responseHeaders: IncomingHttpHeaders = {};
      stream.setTimeout(this.timeoutMs, () => stream.close(constants.NGHTTP2_CANCEL));
      stream.on('response', (h) => {
        status = Number(h[':status']);
        responseHeaders = h;
      });
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('close', () => {
        if (status === 0) reject(new Error(`no response from ${this.origin} (stream closed, code ${stream.rstCode})`));
        else resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks) });
      });
      stream.end(body);
    });
  }

  close(): void {
    this.session?.close();
    this.session = null;
  }

  private connection(): ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const session = connect(this.origin);
    const forget = () => {
      if (this.session === session) this.session = null;
    };
    session.on('error', forget); // requests on it fail on their own; the next one reconnects
    session.on('close', forget);
    session.on('goaway', forget);
    session.unref(); // an idle push connection does not keep the process alive
    this.session = session;
    return session;
  }
}

/** One event of a subscription as both transports frame it. */
export interface WireEvent {
  /** A string, always: the room stream's ids are message ids (what `Last-Event-Id` resumes from). */
  readonly id: string;
  readonly body: unknown;
  /** `body` already serialised, when many subscribers share the same event (fan-out). */
  readonly bodyJson?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The body as JSON text, serialised only if nobody did it already. */
export const bodyJsonOf = (event: WireEvent): string => event.bodyJson ?? JSON.stringify(event.body);

/** How a subscription ended: 204 is a clean end, anything else an error the client sees. */
export interface EndOfStream {
  readonly status: number;
  readonly body: unknown;
}

/** Events a subscription may hold before its transport takes them (only while it opens). */
const MAX_QUEUED = 10_000;

/** Unsent bytes a transport lets one client hold before it counts the client as gone. */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;

/**
 * The push side of one open subscription: handlers `push` events and `end` it. Until its
 * transport attaches with `drainTo`, events wait in a queue (the initial state is pushed
 * while the subscription opens); after that they go straight to the transport, with no
 * promise per event — what a fan-out to thousands of sockets needs. The transport calls
 * `close()` when the client goes away, which runs the handler's clean-ups (listener
 * removal, presence going offline…).
 */
export class EventChannel {
  private queue: WireEvent[] = [];
  private ending: EndOfStream | null = null;
  private closed = false;
  private readonly cleanups: (() => void)[] = [];
  private sink: { event: (e: WireEvent) => void; end: (eos: EndOfStream) => void } | null = null;

  push(event: WireEvent): void {
    if (this.ending || this.closed) return;
    if (this.sink) {
      this.sink.event(event);
      return;
    }
    if (this.queue.length >= MAX_QUEUED) {
      this.end(503, { error: 'unavailable/slow_consumer', error_description: 'The client fell too far behind' });
      return;
    }
    this.queue.push(event);
  }

  /** Ends the stream: 204 cleanly, any other status as an error the client sees. */
  end(status = 204, body: unknown = null): void {
    if (this.ending || this.closed) return;
    this.ending = { status, body };
    this.sink?.end(this.ending);
  }

  /** Hands every event to `event` synchronously from now on (the queued ones first), and the end to `end`. */
  drainTo(event: (e: WireEvent) => void, end: (eos: EndOfStream) => void): void {
    this.sink = { event, end };
    for (const queued of this.queue.splice(0)) {
      if (this.closed) return;
      event(queued);
    }
    if (this.ending && !this.closed) end(this.ending);
  }

  onClose(cleanup: () => void): void {
    if (this.closed) cleanup();
    else this.cleanups.push(cleanup);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    for (const cleanup of this.cleanups.splice(0)) {
      try {
        cleanup();
      } catch {
        /* a clean-up must not stop the others */
      }
    }
  }
}

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

/** Most events a slow client may have waiting before its subscription is ended. */
const MAX_QUEUED = 10_000;

/**
 * The push side of one open subscription: handlers `push` events and `end` it; a transport
 * reads it with `for await`, or takes events as they come with `drainTo` (no promise per
 * event: what a fan-out to thousands of sockets needs), and calls `close()` when the client
 * goes away, which runs the handler's clean-ups (listener removal, presence going offline…).
 */
export class EventChannel implements AsyncIterable<WireEvent> {
  private queue: WireEvent[] = [];
  private wake: (() => void) | null = null;
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
    this.notify();
  }

  end(status = 204, body: unknown = null): void {
    if (this.ending || this.closed) return;
    this.ending = { status, body };
    if (this.sink) this.sink.end(this.ending);
    else this.notify();
  }

  /**
   * Hands every event to `event` synchronously from now on (those already queued first),
   * and the end of the stream to `end`. Use instead of iterating, not beside it.
   */
  drainTo(event: (e: WireEvent) => void, end: (eos: EndOfStream) => void): void {
    this.sink = { event, end };
    for (const queued of this.queue.splice(0)) {
      if (this.closed) return;
      event(queued);
    }
    if (this.ending && !this.closed) end(this.ending);
  }

  /** How the stream ended, once iteration is over (null: the client left). */
  get endOfStream(): EndOfStream | null {
    return this.ending;
  }

  onClose(cleanup: () => void): void {
    if (this.closed) cleanup();
    else this.cleanups.push(cleanup);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.notify();
    for (const cleanup of this.cleanups.splice(0)) {
      try {
        cleanup();
      } catch {
        /* a clean-up must not stop the others */
      }
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WireEvent> {
    for (;;) {
      if (this.closed) return;
      if (this.queue.length) {
        yield this.queue.shift()!;
        continue;
      }
      if (this.ending) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

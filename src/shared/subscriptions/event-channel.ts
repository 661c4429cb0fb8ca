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
 * reads it with `for await` and calls `close()` when the client goes away, which runs the
 * handler's clean-ups (listener removal, presence going offline…).
 */
export class EventChannel implements AsyncIterable<WireEvent> {
  private queue: WireEvent[] = [];
  private wake: (() => void) | null = null;
  private ending: EndOfStream | null = null;
  private closed = false;
  private readonly cleanups: (() => void)[] = [];

  push(event: WireEvent): void {
    if (this.ending || this.closed) return;
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
    this.notify();
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

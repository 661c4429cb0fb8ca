/** One event of a subscription as both transports frame it. */
export interface WireEvent {
  /** A string, always: the room stream's ids are message ids (what `Last-Event-Id` resumes from). */
  readonly id: string;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Set on an event pushed as this very object to many subscribers (a live message in a
   * fan-out): transports encode it once, for the first subscriber, and reuse the bytes.
   */
  readonly shared?: true;
}

/** The frame fields after the subscription id, as JSON text: `"<id>",<headers>,<body>`. */
export const eventFieldsJson = (event: WireEvent): string =>
  `${JSON.stringify(event.id)},${JSON.stringify(event.headers ?? {})},${JSON.stringify(event.body)}`;

/**
 * Wraps a transport's encoding so that an event marked `shared` is encoded once, whichever
 * subscriber gets it first, and its bytes reused for the others; a fan-out then costs each
 * subscriber a lookup and a write. Other events are encoded each time.
 */
export function encodeSharedOnce<Encoded>(encode: (event: WireEvent) => Encoded): (event: WireEvent) => Encoded {
  const encoded = new WeakMap<WireEvent, Encoded>();
  return (event) => {
    if (!event.shared) return encode(event);
    let bytes = encoded.get(event);
    if (bytes === undefined) encoded.set(event, (bytes = encode(event)));
    return bytes;
  };
}

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

/** A connection with frames its transport queued: `writeQueued` writes them, in order. */
export interface QueuedFrames {
  writeQueued(): void;
}

/** How long one turn of the event loop spends writing queued frames before it lets other work run. */
const WRITE_SLICE_MS = 1;
let waiting: QueuedFrames[] = [];
let nextTurn = 0;
let sliceScheduled = false;

/**
 * Gives a connection with newly queued frames its turn to write them. Turns are taken in
 * order, in slices of about a millisecond, one slice per turn of the event loop: a fan-out to
 * thousands of sockets then lets what waits behind it through between slices — the sender's
 * answer leaves among the first deliveries rather than after the last, other requests keep
 * being served — and frames a connection gets within one slice go out in one write.
 */
export function queueTurn(connection: QueuedFrames): void {
  waiting.push(connection);
  if (!sliceScheduled) {
    sliceScheduled = true;
    setImmediate(writeSlice);
  }
}

/** Writes every queued frame now: a drain ends its streams this way before it closes their sockets. */
export function writeAllQueued(): void {
  while (nextTurn < waiting.length) takeTurn();
  compact();
}

function takeTurn(): void {
  const connection = waiting[nextTurn];
  waiting[nextTurn++] = undefined as unknown as QueuedFrames; // let a closed connection go
  try {
    connection.writeQueued();
  } catch {
    /* one connection's failure is its own: the socket reports it and closes */
  }
}

function writeSlice(): void {
  sliceScheduled = false;
  const deadline = performance.now() + WRITE_SLICE_MS;
  // The clock is read every 16 turns: a turn is a few microseconds.
  while (nextTurn < waiting.length) {
    takeTurn();
    if ((nextTurn & 15) === 0 && performance.now() >= deadline) break;
  }
  compact();
  if (nextTurn < waiting.length && !sliceScheduled) {
    sliceScheduled = true;
    setImmediate(writeSlice);
  }
}

/** Callbacks waiting for every frame queued so far to be written (fan-out delivery metrics). */
let whenWritten: (() => void)[] = [];

/** Runs `callback` once every frame queued until now has been written to its socket (at once when none waits). */
export function afterQueuedWrites(callback: () => void): void {
  if (nextTurn === waiting.length) callback();
  else whenWritten.push(callback);
}

function compact(): void {
  if (nextTurn === waiting.length) {
    waiting = [];
    nextTurn = 0;
    if (whenWritten.length) for (const callback of whenWritten.splice(0)) callback();
  } else if (nextTurn > 4096) {
    waiting = waiting.slice(nextTurn);
    nextTurn = 0;
  }
}

/**
 * The head of the log on disk, shared by the request thread (which writes it after each durable
 * commit) and the projector thread (which reads the log up to it), in shared memory rather than a
 * message: a commit's report is two atomic stores and a notify, where a `postMessage` cost the
 * request thread tens of microseconds per commit. The projector thread wakes on the notify.
 */
/** `Atomics.waitAsync` (Node 16+, ES2024: newer than the compiler's library here). */
const waitAsync = (Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number): { async: false; value: string } | { async: true; value: Promise<string> };
}).waitAsync;

export class SharedHead {
  /** [0]: how many times the head moved (what a waiter waits on). */
  private readonly moves: Int32Array;
  /** [1]: the head (a row of events.sqlite). */
  private readonly position: BigInt64Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(16)) {
    this.moves = new Int32Array(buffer, 0, 2);
    this.position = new BigInt64Array(buffer, 0, 2);
  }

  get through(): number {
    return Number(Atomics.load(this.position, 1));
  }

  /** Request thread: every row up to `through` is on disk. */
  moveTo(through: number): void {
    Atomics.store(this.position, 1, BigInt(through));
    Atomics.add(this.moves, 0, 1);
    Atomics.notify(this.moves, 0);
  }

  /**
   * Projector thread: calls `moved(through)` at every move from now on, without blocking the thread
   * (`Atomics.waitAsync`), until the returned function is called.
   */
  follow(moved: (through: number) => void): () => void {
    let following = true;
    const wait = (seen: number) => {
      if (!following) return;
      const result = waitAsync(this.moves, 0, seen);
      const next = () => {
        if (!following) return;
        const now = Atomics.load(this.moves, 0);
        moved(this.through);
        wait(now);
      };
      if (result.async) void result.value.then(next);
      else next();
    };
    wait(Atomics.load(this.moves, 0));
    return () => {
      following = false;
      // Wakes the pending wait so that it ends.
      Atomics.add(this.moves, 0, 1);
      Atomics.notify(this.moves, 0);
    };
  }
}

/** Runs `end` once the event loop has turned (`setImmediate`: after the I/O it is waiting for). */
export type TurnScheduler = (end: () => void) => void;

/**
 * Stands for the current turn of the event loop: `current()` answers the same object until the
 * loop turns or `end()` is called, then a new one. Whatever was read in a turn is known to be
 * as fresh as anything this process could know in that turn, unless it wrote since (`end()`).
 */
export class EventLoopTurn {
  private turn: object = {};
  private ending = false;

  constructor(private readonly schedule: TurnScheduler = setImmediate) {}

  /** The current turn (its end is scheduled the first time it is asked for). */
  current(): object {
    if (!this.ending) {
      this.ending = true;
      this.schedule(() => this.end());
    }
    return this.turn;
  }

  /** Ends the current turn now: what was read in it may be out of date. */
  end(): void {
    this.turn = {};
    this.ending = false;
  }
}

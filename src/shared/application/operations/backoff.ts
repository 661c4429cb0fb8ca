/** Exponential backoff with full jitter: the waits between resubscription attempts after a drop. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
  ) {}

  /** The next wait: random up to initial × 2^attempt, capped. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  reset(): void {
    this.attempt = 0;
  }
}

import { LogPosition, positionAfter } from '../../../domain/event';

/** Tells its listeners that positions may have moved (read-your-writes listens). */
export class ProgressSignal {
  private readonly listeners = new Set<() => void>();

  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/**
 * Whether the projections a runner holds have folded everything that was in the log when it
 * first claimed them (start-up and a rebuild wait for it). Once reached, it stays reached.
 */
export class FirstCatchUp {
  private head: LogPosition | null = null;
  private done = false;
  private readonly waiters: (() => void)[] = [];

  get reached(): boolean {
    return this.done;
  }

  /** Resolves once reached. */
  async wait(): Promise<void> {
    if (this.done) return;
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Notes the log's head at a claim, until one is known (an empty log has none yet). */
  async noteHead(read: () => Promise<LogPosition | null>): Promise<void> {
    if (this.head === null && !this.done) this.head = await read();
  }

  /** Whether each of these positions (the projections that still fold) is at or past the head noted. */
  headReachedBy(positions: readonly (LogPosition | null)[]): boolean {
    const head = this.head;
    return !(head !== null && positions.some((position) => positionAfter(head, position)));
  }

  /** Marks it reached when these positions are all at the head noted, and tells the waiters. */
  check(positions: readonly (LogPosition | null)[]): void {
    if (this.done || !this.headReachedBy(positions)) return;
    this.done = true;
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}

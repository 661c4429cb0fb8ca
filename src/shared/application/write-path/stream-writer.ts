import { AppendResult, AppendTooLargeError, EventStore, ExpectedRevision } from '../../ports/event-store.port';
import { recordAppend } from '../../observability/metrics';
import { decideBatch, DecidedCommand, QueuedCommand } from './batch-decision';
import { noteAppended } from './idempotency-guards';
import { answerOnceProjected } from './projected-answers';
import { ReadYourWrites } from './read-your-writes';
import { StreamStates } from './stream-states';
import { changeTooLarge, concurrentModification, explainFailedAppend } from './write-errors';

/** How many times a command is decided (or built) in all: at its `MAX_ATTEMPTS`th race lost to another writer it is answered 409. */
export const MAX_ATTEMPTS = 4;
/**
 * Most commands of one stream decided and appended together. Their events also stay under the
 * store's `maxAppendBytes` (EventStoreDB refuses larger appends): a command that would pass it
 * waits for the next append.
 */
const MAX_BATCH = 500;

/**
 * Appends commands' events to their streams, one queue per stream: whatever arrived while the
 * previous append was in flight is decided in order against the evolving state and appended as
 * one batch, so a busy stream (a room's timeline) costs one append per batch and no conflicts
 * in-process. A concurrent writer (another process) makes the append fail on its expected
 * revision: the batch is then decided again on fresh state (a built command that state outdates
 * is built again on it), a bounded number of times per command (`MAX_ATTEMPTS`, then 409 with
 * nothing saved).
 */
export class StreamWriter {
  private readonly queues = new Map<string, QueuedCommand[]>();
  /** Set below the store's limit after it refused a group as too large (a limit it had not declared). */
  private refusedBytes = Infinity;

  constructor(
    private readonly events: EventStore,
    private readonly states: StreamStates,
    private readonly readYourWrites: ReadYourWrites,
  ) {}

  enqueue(stream: string, item: QueuedCommand): void {
    const queue = this.queues.get(stream);
    if (queue) {
      queue.push(item);
      return;
    }
    this.queues.set(stream, [item]);
    void this.drain(stream);
  }

  /**
   * Builds each command (`item.build`) on `state`, or on the stream's current state when none is
   * given, in order, and queues it. A command whose building fails (its state could not be read,
   * or the builder refused) fails alone: nothing of it was appended.
   */
  async build(stream: string, items: readonly QueuedCommand[], on?: { readonly state: unknown }): Promise<void> {
    if (!items.length) return;
    let state: unknown;
    try {
      state = on ? on.state : (await this.states.load(stream, items[0].decider)).state;
    } catch (error) {
      for (const item of items) item.reject(error);
      return;
    }
    for (const item of items) {
      try {
        const built = await item.build!(state);
        item.command = built.command;
        item.metadata = built.metadata;
      } catch (error) {
        item.reject(error);
        continue;
      }
      this.enqueue(stream, item);
    }
  }

  private async drain(stream: string): Promise<void> {
    const queue = this.queues.get(stream)!;
    try {
      while (queue.length) await this.decideAndAppend(stream, queue, queue.splice(0, MAX_BATCH));
    } finally {
      this.queues.delete(stream);
    }
  }

  private async decideAndAppend(stream: string, queue: QueuedCommand[], batch: QueuedCommand[]): Promise<void> {
    let folded;
    try {
      folded = await this.states.load(stream, batch[0].decider);
    } catch (error) {
      for (const item of batch) item.reject(error); // nothing appended: "nothing was changed", or a bug (500)
      return;
    }
    const maxBytes = Math.min(this.events.maxAppendBytes ?? Infinity, this.refusedBytes);
    const { decided, state, deferred, outdated, failed } = decideBatch(batch, folded.state, maxBytes);
    for (const { item, error } of failed) item.reject(error);
    // Another writer moved the stream on since they were built: built again (they come after
    // the commands decided here, whose ids or whatever they hold were taken before theirs).
    void this.build(stream, outdated.filter((item) => item.conflicted || this.mayTryAgain(item)), { state });
    for (const item of [...outdated, ...decided.map((d) => d.item)]) item.conflicted = false;
    queue.unshift(...deferred); // decided again, first, on the state this append leaves
    const toAppend = decided.flatMap((d) => d.toAppend);
    if (toAppend.length === 0) {
      for (const d of decided) d.item.resolve({ state: d.state, events: [], position: null });
      return;
    }
    const expected: ExpectedRevision = folded.revision < 0 ? 'no_stream' : folded.revision;
    let result: AppendResult;
    try {
      const started = performance.now();
      result = await this.events.append(stream, toAppend, expected);
      recordAppend(toAppend.length, (performance.now() - started) / 1000);
      this.states.endTurn(); // what was read before the append may be out of date
    } catch (error) {
      this.states.endTurn(); // the log may hold what this process has not read
      // The cached state is still that of `folded.revision` (evolve is pure): loading reads on from it.
      const failure = await explainFailedAppend(this.events, stream, expected, toAppend, error);
      switch (failure.kind) {
        case 'conflict':
          return this.retryOnFreshState(queue, decided);
        case 'too_large':
          return this.splitTooLarge(queue, decided, failure.error);
        case 'refused':
          for (const d of decided) d.item.reject(failure.error);
          return;
        case 'landed':
          result = failure.result;
      }
    }
    this.states.appended(stream, state, result.nextExpectedRevision, folded.epoch, result.streamVersion);
    noteAppended(stream, toAppend, result.position);
    // The next batch may append while this one waits for the read models.
    answerOnceProjected(this.readYourWrites, decided, result.position);
  }

  /**
   * A group the store refused as too large is decided again in smaller groups (the store's
   * limit was lower than it declared, or than this count of it); a single command that is too
   * large on its own is refused (413), and the commands after it go ahead.
   */
  private splitTooLarge(queue: QueuedCommand[], decided: DecidedCommand[], error: AppendTooLargeError): void {
    const writing = decided.filter((d) => d.toAppend.length);
    if (writing.length === 1) {
      writing[0].item.reject(changeTooLarge(error));
      // Those that decided nothing decided on its events: again, without them.
      queue.unshift(...decided.filter((d) => d !== writing[0]).map((d) => d.item));
      return;
    }
    const limit = error.bytes > error.maxBytes ? error.maxBytes : Math.floor(error.bytes / 2);
    this.refusedBytes = Math.min(this.refusedBytes, limit);
    queue.unshift(...decided.map((d) => d.item));
  }

  /**
   * Another writer appended first: each command is decided again, in the same order, on fresh
   * state (a built one is built again only if that state outdates it: `Decider.outdated`).
   */
  private retryOnFreshState(queue: QueuedCommand[], decided: DecidedCommand[]): void {
    const again = decided.map((d) => d.item).filter((item) => this.mayTryAgain(item));
    for (const item of again) item.conflicted = true;
    queue.unshift(...again);
  }

  /** Counts one lost race; past the bound the command is answered 409, nothing of it saved. */
  private mayTryAgain(item: QueuedCommand): boolean {
    if (++item.attempts < MAX_ATTEMPTS) return true;
    item.reject(concurrentModification());
    return false;
  }
}

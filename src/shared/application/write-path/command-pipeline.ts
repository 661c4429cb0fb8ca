import { Inject, Injectable, Optional } from '@nestjs/common';
import { Decider } from '../../domain/decider';
import { DomainEvent, EventMetadata, RecordedEvent } from '../../domain/event';
import { EVENT_STORE, EventStore, ReadStreamOptions } from '../../ports/event-store.port';
import { DataKeyOf } from '../../domain/personal-data';
import { requestIdOf } from '../../observability/request-context';
import { BuiltCommand, CommandOutcome, QueuedCommand } from './batch-decision';
import { guardOf } from './idempotency-guards';
import { INSTANCE_EPOCHS, InstanceEpochs } from './instance-epochs';
import { READ_YOUR_WRITES, ReadYourWrites } from './read-your-writes';
import { Folded, StreamStates } from './stream-states';
import { StreamWriter } from './stream-writer';
import { changeNotSaved } from './write-errors';

export type { BuiltCommand, CommandOutcome } from './batch-decision';
export type { Folded } from './stream-states';
export { STATE_CACHE_ENTRIES } from './stream-states';
export { changeNotSaved } from './write-errors';

export interface RunOptions {
  /**
   * Checkpoint names (`checkpointName(definition)`, e.g. `messages_v1`) of the projections
   * that reads of the written entity need: the command answers once those reflect it.
   * Omitted: the projections that fold the events the command appended (the read models it
   * changed), so a projection that is behind or parked holds up only the writes it shows.
   * Empty: as soon as the append is durable, for internal writes no read depends on (id
   * reservations).
   */
  readonly awaitProjections?: readonly string[];
  /**
   * Projections among `awaitProjections` whose every reader first waits for them to fold the
   * writes left to them (readAfterWrites: the messages a send adds): while this process folds
   * them (`ReadYourWrites.foldsHere`, the embedded server) the answer does not wait for them, and
   * a read made after it still shows the change. Elsewhere (an API process beside projector
   * workers), or while one of them is not folding here, the answer waits as for the others.
   */
  readonly readersWait?: readonly string[];
}

/**
 * The HTTP request a command runs for (if any) is named in its events, joining the audit trail to
 * the access log; a request with an `Idempotency-Key` has its key record travel in the same append
 * as the change it guards (see idempotency-guards.ts).
 */
const stamped = (metadata: EventMetadata): EventMetadata => {
  const requestId = requestIdOf(metadata.actor);
  if (!requestId) return metadata;
  const idempotency = guardOf(requestId);
  if (metadata.request_id !== undefined && !idempotency) return metadata;
  return { ...metadata, request_id: metadata.request_id ?? requestId, ...(idempotency && { idempotency }) };
};

/** What a queued command needs besides the command itself: its decider and how to answer it. */
const answering = <S, C, E extends DomainEvent>(
  decider: Decider<S, C, E>,
  resolve: (outcome: CommandOutcome<S, E>) => void,
  reject: (error: unknown) => void,
  options: RunOptions,
) => ({
  decider: decider as unknown as QueuedCommand['decider'],
  awaitProjections: options.awaitProjections,
  readersWait: options.readersWait,
  resolve: resolve as QueuedCommand['resolve'],
  reject,
  attempts: 0,
});

/**
 * The one write path: read the stream, fold it, decide, append with the revision read, then
 * wait until the read models the answer depends on show the change. Its parts:
 * - `StreamStates` loads streams' states (the cache and its turn-validity invariant);
 * - `StreamWriter` queues commands per stream, decides them in batches (`decideBatch`), appends,
 *   and decides again on fresh state when another writer appended first (bounded);
 * - `write-errors.ts` says truthfully whether a failed change is in the log;
 * - `answerOnceProjected` answers once the read models reflect the append (read-your-writes).
 */
@Injectable()
export class CommandPipeline {
  private readonly states: StreamStates;
  private readonly writer: StreamWriter;

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) readYourWrites: ReadYourWrites,
    @Optional() @Inject(INSTANCE_EPOCHS) epochs?: InstanceEpochs,
  ) {
    this.states = new StreamStates(events, epochs);
    this.writer = new StreamWriter(events, this.states, readYourWrites);
  }

  /** The stream's current state; a failed read answers 503 "nothing was changed". */
  load<S, E extends DomainEvent>(stream: string, decider: Decider<S, unknown, E>): Promise<Folded<S>> {
    return this.states.load(stream, decider);
  }

  /** Events of a stream as the write side reads them: a failed read answers 503 "nothing was changed". */
  readStream(stream: string, options: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.states.readStream(stream, options);
  }

  /**
   * Makes data keys ready (created durably, all in one write) for commands to come whose events
   * will name them; a store that seals nothing has nothing to do.
   */
  async prepareKeys(keys: readonly DataKeyOf[]): Promise<void> {
    try {
      await this.events.prepareKeys?.(keys);
    } catch (error) {
      // Nothing of the commands was written yet.
      throw changeNotSaved(error);
    }
  }

  /** Decides `command` on the stream's current state, appends what it decided, and answers once the read models show it. */
  run<S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    command: C,
    metadata: EventMetadata,
    options: RunOptions = {},
  ): Promise<CommandOutcome<S, E>> {
    return new Promise((resolve, reject) => {
      this.writer.enqueue(stream, { ...answering(decider, resolve, reject, options), command, metadata: stamped(metadata) });
    });
  }

  /**
   * As `run`, for a command built from the state it is decided on (a message takes an id above
   * its timeline's last): `build` is given the stream's current state, and is called again on a
   * fresh one whenever another writer moved the stream on under the command (`decider.outdated`,
   * or a conflict at the append), within the same bounded retry as every command. Several
   * commands may be built on one state: what `build` takes must not outdate the ones built before
   * it in this process (message ids come from the process's increasing blocks), or each would
   * count a race lost to its neighbour.
   */
  buildAndRun<S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    build: (state: S) => Promise<BuiltCommand<C>>,
    options: RunOptions = {},
  ): Promise<CommandOutcome<S, E>> {
    return new Promise((resolve, reject) => {
      const item: QueuedCommand = {
        ...answering(decider, resolve, reject, options),
        // Set by `build` before the command is queued.
        command: undefined,
        metadata: { occurred_at: '' },
        build: async (state) => {
          const built = await build(state as S);
          return { command: built.command, metadata: stamped(built.metadata) };
        },
      };
      void this.writer.build(stream, [item]);
    });
  }
}

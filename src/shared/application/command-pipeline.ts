import { Inject, Injectable } from '@nestjs/common';
import { Decider } from '../domain/decider';
import { conflict } from '../domain/errors';
import { DomainEvent, EventMetadata, LogPosition } from '../domain/event';
import { EVENT_STORE, EventStore, WrongExpectedRevisionError } from '../ports/event-store.port';
import { READ_YOUR_WRITES, ReadYourWrites } from './read-your-writes';

interface Folded<S> {
  readonly state: S;
  /** Revision of the last event folded, or -1 when the stream does not exist. */
  readonly revision: number;
}

export interface CommandOutcome<S, E> {
  readonly state: S;
  readonly events: E[];
  /** Where the new events landed, or null when the command decided nothing. */
  readonly position: LogPosition | null;
}

const MAX_ATTEMPTS = 4;
const CACHE_LIMIT = 20_000;
/** Most commands of one stream decided and appended together. */
const MAX_BATCH = 500;

interface Queued {
  readonly decider: Decider<unknown, unknown, DomainEvent>;
  readonly command: unknown;
  readonly metadata: EventMetadata;
  readonly resolve: (outcome: CommandOutcome<unknown, DomainEvent>) => void;
  readonly reject: (error: unknown) => void;
  attempts: number;
}

/**
 * The one write path: read the stream, fold it, decide, append with the revision read,
 * then wait until the read models show the change. A concurrent writer (another process)
 * makes the append fail on its expected revision; the command is then decided again on
 * fresh state.
 *
 * Commands for one stream are queued: whatever arrived while the previous append was in
 * flight is decided in order against the evolving state and appended as one batch, so a
 * busy stream (a room's timeline) costs one append per batch and no conflicts in-process.
 * Folded states are cached by stream and revision, so a hot stream is read from where the
 * cache left it rather than from its start; another process's appends are still read.
 */
@Injectable()
export class CommandPipeline {
  private readonly cache = new Map<string, Folded<unknown>>();
  private readonly queues = new Map<string, Queued[]>();

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
  ) {}

  async load<S, E extends DomainEvent>(stream: string, decider: Decider<S, unknown, E>): Promise<Folded<S>> {
    const cached = this.cache.get(stream) as Folded<S> | undefined;
    let state = cached ? cached.state : decider.initialState();
    let revision = cached ? cached.revision : -1;
    const newer = await this.events.readStream(stream, { fromRevision: revision + 1 });
    for (const event of newer) {
      state = decider.evolve(state, event as unknown as E);
      revision = event.revision;
    }
    const folded = { state, revision };
    if (newer.length > 0 || !cached) this.remember(stream, folded);
    return folded;
  }

  run<S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    command: C,
    metadata: EventMetadata,
  ): Promise<CommandOutcome<S, E>> {
    return new Promise((resolve, reject) => {
      const queued: Queued = {
        decider: decider as unknown as Queued['decider'],
        command,
        metadata,
        resolve: resolve as Queued['resolve'],
        reject,
        attempts: 0,
      };
      const queue = this.queues.get(stream);
      if (queue) {
        queue.push(queued);
        return;
      }
      this.queues.set(stream, [queued]);
      void this.drain(stream);
    });
  }

  private async drain(stream: string): Promise<void> {
    const queue = this.queues.get(stream)!;
    try {
      while (queue.length) await this.decideAndAppend(stream, queue, queue.splice(0, MAX_BATCH));
    } finally {
      this.queues.delete(stream);
    }
  }

  private async decideAndAppend(stream: string, queue: Queued[], batch: Queued[]): Promise<void> {
    let folded: Folded<unknown>;
    try {
      folded = await this.load(stream, batch[0].decider);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    let state = folded.state;
    const decided: { item: Queued; events: DomainEvent[]; state: unknown }[] = [];
    for (const item of batch) {
      try {
        const events = item.decider.decide(item.command, state);
        for (const event of events) state = item.decider.evolve(state, event);
        decided.push({ item, events, state });
      } catch (error) {
        item.reject(error); // this command alone fails; the others still go ahead
      }
    }
    const toAppend = decided.flatMap(({ item, events }) =>
      events.map((e) => ({ type: e.type, data: e.data, metadata: item.metadata })),
    );
    if (toAppend.length === 0) {
      for (const d of decided) d.item.resolve({ state: d.state, events: [], position: null });
      return;
    }
    let position: LogPosition;
    try {
      const result = await this.events.append(stream, toAppend, folded.revision < 0 ? 'no_stream' : folded.revision);
      position = result.position;
      this.remember(stream, { state, revision: result.nextExpectedRevision });
    } catch (error) {
      this.cache.delete(stream); // deciding may have evolved the cached state
      if (!(error instanceof WrongExpectedRevisionError)) {
        for (const d of decided) d.item.reject(error);
        return;
      }
      const again = decided.map((d) => d.item).filter((item) => ++item.attempts < MAX_ATTEMPTS);
      for (const d of decided) {
        if (d.item.attempts >= MAX_ATTEMPTS) {
          d.item.reject(conflict('concurrent_modification', 'The resource was changed by another request at the same time; retry'));
        }
      }
      queue.unshift(...again); // decided again, in the same order, on fresh state
      return;
    }
    // The next batch may append while this one waits for the read models.
    this.readYourWrites.waitFor(position).then(
      () => {
        for (const d of decided) d.item.resolve({ state: d.state, events: d.events, position: d.events.length ? position : null });
      },
      (error) => {
        for (const d of decided) d.item.reject(error);
      },
    );
  }

  private remember(stream: string, folded: Folded<unknown>): void {
    this.cache.delete(stream);
    this.cache.set(stream, folded);
    if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
  }
}

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

/**
 * The one write path: read the stream, fold it, decide, append with the revision read,
 * then wait until the read models show the change. A concurrent writer makes the append
 * fail on its expected revision; the command is then decided again on fresh state.
 *
 * Folded states are cached by stream and revision, so a hot stream is read from where the
 * cache left it rather than from its start; another process's appends are still read.
 */
@Injectable()
export class CommandPipeline {
  private readonly cache = new Map<string, Folded<unknown>>();

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

  async run<S, C, E extends DomainEvent>(
    stream: string,
    decider: Decider<S, C, E>,
    command: C,
    metadata: EventMetadata,
  ): Promise<CommandOutcome<S, E>> {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await this.load(stream, decider as Decider<S, unknown, E>);
      const events = decider.decide(command, state);
      if (events.length === 0) return { state, events, position: null };
      try {
        const result = await this.events.append(
          stream,
          events.map((e) => ({ type: e.type, data: e.data, metadata })),
          revision < 0 ? 'no_stream' : revision,
        );
        let next = state;
        for (const e of events) next = decider.evolve(next, e);
        this.remember(stream, { state: next, revision: result.nextExpectedRevision });
        await this.readYourWrites.waitFor(result.position);
        return { state: next, events, position: result.position };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        this.cache.delete(stream);
        if (attempt >= MAX_ATTEMPTS) {
          throw conflict('concurrent_modification', 'The resource was changed by another request at the same time; retry');
        }
      }
    }
  }

  private remember(stream: string, folded: Folded<unknown>): void {
    this.cache.delete(stream);
    this.cache.set(stream, folded);
    if (this.cache.size > CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value as string);
  }
}

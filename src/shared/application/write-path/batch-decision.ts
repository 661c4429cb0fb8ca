import { Decider } from '../../domain/decider';
import { DomainEvent, EventMetadata, LogPosition } from '../../domain/event';
import { appendSize, EventToAppend, newEventId } from '../../ports/event-store.port';
import { concurrentModification } from './write-errors';

/** A command with the metadata of the events it appends. */
export interface BuiltCommand<C> {
  readonly command: C;
  readonly metadata: EventMetadata;
}

export interface CommandOutcome<S, E> {
  readonly state: S;
  readonly events: E[];
  /** Where the new events landed, or null when the command decided nothing. */
  readonly position: LogPosition | null;
}

/** A command waiting in its stream's queue, and how to answer it. */
export interface QueuedCommand {
  readonly decider: Decider<unknown, unknown, DomainEvent>;
  command: unknown;
  metadata: EventMetadata;
  /** Builds the command from the stream's state, again whenever that state moved on under it (see `Decider.outdated`). */
  readonly build?: (state: unknown) => Promise<BuiltCommand<unknown>>;
  /** As `RunOptions.awaitProjections`. */
  readonly awaitProjections: readonly string[] | undefined;
  /** As `RunOptions.readersWait`. */
  readonly readersWait?: readonly string[];
  readonly resolve: (outcome: CommandOutcome<unknown, DomainEvent>) => void;
  readonly reject: (error: unknown) => void;
  /** How many times it lost a race to another writer (it is decided again on fresh state, a few times). */
  attempts: number;
  /**
   * Set when it is queued again after a conflict at its append (that lost race is counted): a
   * built command then found out of date on the fresh state lost the same race, not another.
   */
  conflicted?: boolean;
}

export interface DecidedCommand {
  readonly item: QueuedCommand;
  readonly events: DomainEvent[];
  /** The state once its events (and those of the commands before it) are appended. */
  readonly state: unknown;
  readonly toAppend: EventToAppend[];
}

export interface BatchDecision {
  /** In queue order, each decided on the state the ones before it leave: their events go in one append. */
  readonly decided: DecidedCommand[];
  /** The state once `decided` is appended (the one the batch was decided on if nothing is). */
  readonly state: unknown;
  /** Past the append's byte limit: decided again, first, on the state this append leaves. */
  readonly deferred: QueuedCommand[];
  /** Built on an older state than the one they met: to be built again, on `state`. */
  readonly outdated: QueuedCommand[];
  /** Failed alone (their decider refused them, or they were outdated and cannot be built again); nothing of them is appended. */
  readonly failed: { readonly item: QueuedCommand; readonly error: unknown }[];
}

/**
 * Decides a stream's queued commands in order against the evolving state, as one append of at
 * most `maxBytes` (the first command that decides something always goes: a store refuses it
 * alone if it is too large). A command that fails fails alone; the others still go ahead.
 * Sized only where a store has a limit (`maxBytes` finite): serializing every send to count it
 * costs SQLite for nothing.
 */
export function decideBatch(batch: readonly QueuedCommand[], state: unknown, maxBytes: number): BatchDecision {
  const decided: DecidedCommand[] = [];
  const deferred: QueuedCommand[] = [];
  const outdated: QueuedCommand[] = [];
  const failed: { item: QueuedCommand; error: unknown }[] = [];
  let bytes = 0;
  for (const [index, item] of batch.entries()) {
    if (item.decider.outdated?.(item.command, state)) {
      if (item.build) outdated.push(item);
      else failed.push({ item, error: concurrentModification() });
      continue;
    }
    let events: DomainEvent[];
    let next = state;
    try {
      events = item.decider.decide(item.command, state);
      for (const event of events) next = item.decider.evolve(next, event);
    } catch (error) {
      failed.push({ item, error });
      continue;
    }
    const toAppend = events.map((e) => ({ id: newEventId(), type: e.type, data: e.data, metadata: item.metadata }));
    const size = maxBytes === Infinity ? 0 : appendSize(toAppend);
    if (decided.some((d) => d.toAppend.length) && bytes + size > maxBytes) {
      deferred.push(...batch.slice(index));
      break;
    }
    bytes += size;
    state = next;
    decided.push({ item, events, state, toAppend });
  }
  return { decided, state, deferred, outdated, failed };
}

import { DomainEvent } from './event';

/**
 * A decider (emmett's shape): `decide` turns a command and the current state into new events
 * (or throws a DomainError); `evolve` folds one event into state. Both are pure.
 * Returning no events means "nothing to do", which makes retried commands idempotent.
 */
export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  /** Returns a new state; never changes `state` (states are cached and shared). */
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
  /**
   * For streams whose state depends only on their newest events (a timeline needs its last
   * message id, not every message): true for an event from which folding forwards gives the
   * whole state. A stream is then read backwards to the newest such event, not from its
   * start, so loading it costs the same however long it grew.
   */
  readonly foldsFrom?: (event: Event) => boolean;
  /**
   * Where a stream starts once its instance has been wiped (default: `initialState`), for a
   * state a wipe leaves otherwise than a new instance begins: a new instance has the built-in
   * roles, a wiped one has no role until its owner creates them again, as Chatkit did.
   */
  readonly wipedState?: () => State;
  /**
   * For commands built from the state they are decided on (`CommandPipeline.buildAndRun`):
   * true when `state` has moved past what `command` was built from (a message id allocated at
   * or below the timeline's newest, because another process sent to the room first). Such a
   * command is not decided: the pipeline builds it again on `state`, as often as it retries a
   * conflict, and answers 409 past that.
   */
  outdated?(command: Command, state: State): boolean;
}

export const fold = <State, Event extends DomainEvent>(
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  events: Iterable<Event>,
  from: State = decider.initialState(),
): State => {
  let state = from;
  for (const event of events) state = decider.evolve(state, event);
  return state;
};

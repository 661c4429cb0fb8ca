import { DomainEvent } from './event';

/**
 * A decider (emmett's shape): `decide` turns a command and the current state into new events
 * (or throws a DomainError); `evolve` folds one event into state. Both are pure.
 * Returning no events means "nothing to do", which makes retried commands idempotent.
 */
export interface Decider<State, Command, Event extends DomainEvent> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
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

import { expect } from '@jest/globals';
import type { Decider } from '../../src/shared/domain/decider';
import type { DomainEvent } from '../../src/shared/domain/event';

/**
 * Given/when/then for deciders, after emmett's `DeciderSpecification`: given the events a
 * stream holds, when a command is decided, then exactly these events, nothing, or a refusal.
 *
 *   const given = deciderSpecification(roomDecider);
 *   given(created, joined(ann)).when(addBen).then([{ type: 'RoomMembersAdded', data: … }]);
 *   given(created).when(addAnnAgain).thenNothingHappened();
 *   given().when(update).thenThrows({ code: 'not_found/room_not_found', status: 404 });
 *
 * The state is folded from `initialState` (from `wipedState` with `given.afterWipe(…)`), as the
 * command pipeline folds it, and every state evolve and decide see is deeply frozen: states
 * are cached and shared, so a decider that changes one it was given fails its spec.
 */
export function deciderSpecification<S, C, E extends DomainEvent>(decider: Decider<S, C, E>): Given<C, E> & { afterWipe: Given<C, E> } {
  const from =
    (start: () => S): Given<C, E> =>
    (...given) => ({
      when: (command) => decisionOf(() => decider.decide(command, foldFrozen(decider, start(), given.flat() as E[]))),
    });
  const wiped = decider.wipedState ?? decider.initialState;
  return Object.assign(from(decider.initialState), { afterWipe: from(wiped) });
}

/** The events a stream already holds: events, or lists of them (flattened in order). */
export type Given<C, E> = (...given: (E | readonly E[])[]) => { when(command: C): Decision<E> };

/**
 * What was decided. `then` takes exactly the events expected (jest's asymmetric matchers such as
 * `expect.objectContaining` allowed) and returns the events decided, to be given to the next decision.
 */
export interface Decision<E> {
  then(expected: readonly E[]): E[];
  thenNothingHappened(): void;
  /** Every expectation must hold of the error thrown; returns it. */
  thenThrows(expected: Refusal, ...more: Refusal[]): unknown;
}

/** An error class the refusal is an instance of, a pattern its message matches, or fields it has (`{code, status}`). */
export type Refusal = (abstract new (...args: never[]) => Error) | RegExp | Record<string, unknown>;

function decisionOf<E>(decide: () => E[]): Decision<E> {
  return {
    then(expected) {
      const events = decide();
      expect(events).toEqual(expected);
      return events;
    },
    thenNothingHappened() {
      expect(decide()).toEqual([]);
    },
    thenThrows(...expected) {
      let decided: E[];
      try {
        decided = decide();
      } catch (error) {
        for (const refusal of expected) {
          if (typeof refusal === 'function') expect(error).toBeInstanceOf(refusal);
          else if (refusal instanceof RegExp) expect((error as Error).message).toMatch(refusal);
          else expect(error).toMatchObject(refusal);
        }
        return error;
      }
      throw new Error(`The decision was expected to be refused, but it decided ${JSON.stringify(decided)}`);
    },
  };
}

const foldFrozen = <S, E extends DomainEvent>(decider: Decider<S, unknown, E>, from: S, events: readonly E[]): S => {
  let state = frozen(from);
  for (const event of events) state = frozen(decider.evolve(state, event));
  return state;
};

/** Deep-freezes a value, Maps and Sets included, so that code changing it throws. */
export function frozen<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  if (value instanceof Map) {
    for (const [key, item] of value) frozen(key), frozen(item);
    refuse(value, ['set', 'delete', 'clear']);
  } else if (value instanceof Set) {
    for (const item of value) frozen(item);
    refuse(value, ['add', 'delete', 'clear']);
  }
  for (const item of Object.values(value)) frozen(item);
  return Object.freeze(value);
}

const refuse = (target: object, methods: string[]) => {
  for (const method of methods) {
    Object.defineProperty(target, method, {
      value: () => {
        throw new TypeError(`Cannot ${method} on a frozen ${target.constructor.name}: a state is shared, make a new one`);
      },
    });
  }
};

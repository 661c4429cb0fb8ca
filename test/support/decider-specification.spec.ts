import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Decider } from '../../src/shared/domain/decider';
import { conflict, DomainError } from '../../src/shared/domain/errors';
import { DomainEvent } from '../../src/shared/domain/event';
import { deciderSpecification, frozen } from './decider-specification';

type Counted = DomainEvent<'Counted', { n: number }>;
type Count = { type: 'Count'; n: number } | { type: 'Reset' };
type Tally = { readonly total: number; readonly seen: ReadonlySet<number> };

/** A small decider: counts each number once, refuses 13. */
const tally: Decider<Tally, Count, Counted> = {
  initialState: () => ({ total: 0, seen: new Set() }),
  wipedState: () => ({ total: 100, seen: new Set() }),
  evolve: (state, event) => ({ total: state.total + event.data.n, seen: new Set(state.seen).add(event.data.n) }),
  decide(command, state) {
    if (command.type === 'Reset') return state.total === 0 ? [] : [{ type: 'Counted', data: { n: -state.total } }];
    if (command.n === 13) throw conflict('unlucky', 'Not 13');
    return state.seen.has(command.n) ? [] : [{ type: 'Counted', data: { n: command.n } }];
  },
};
const counted = (n: number): Counted => ({ type: 'Counted', data: { n } });
const given = deciderSpecification(tally);

describe('deciderSpecification: given events, when a command, then events or a refusal', () => {
  it('folds the given events (single or in lists) and compares the decision with the events expected', () => {
    expect(given(counted(1), [counted(2), counted(3)]).when({ type: 'Reset' }).then([counted(-6)])).toEqual([counted(-6)]);
    given(counted(1)).when({ type: 'Count', n: 2 }).then([expect.objectContaining({ type: 'Counted' })]);
    expect(() => given(counted(1)).when({ type: 'Count', n: 2 }).then([counted(3)])).toThrow(/toEqual/);
    expect(() => given(counted(1)).when({ type: 'Count', n: 2 }).then([])).toThrow(/toEqual/);
  });

  it('says nothing happened only when the decision is empty', () => {
    given(counted(2)).when({ type: 'Count', n: 2 }).thenNothingHappened();
    expect(() => given().when({ type: 'Count', n: 2 }).thenNothingHappened()).toThrow(/toEqual/);
  });

  it('checks a refusal by class, message and fields, and fails when the command is not refused', () => {
    const error = given().when({ type: 'Count', n: 13 }).thenThrows(DomainError, /Not 13/, { code: 'conflict/unlucky', status: 409 });
    expect(error).toBeInstanceOf(DomainError);
    expect(() => given().when({ type: 'Count', n: 13 }).thenThrows({ code: 'conflict/lucky' })).toThrow(/toMatchObject/);
    expect(() => given().when({ type: 'Count', n: 13 }).thenThrows(TypeError)).toThrow(/toBeInstanceOf/);
    expect(() => given().when({ type: 'Count', n: 12 }).thenThrows(DomainError)).toThrow(
      'The decision was expected to be refused, but it decided [{"type":"Counted","data":{"n":12}}]',
    );
  });

  it('folds from the wiped state with afterWipe', () => {
    given.afterWipe().when({ type: 'Reset' }).then([counted(-100)]);
    given().when({ type: 'Reset' }).thenNothingHappened();
  });

  it('fails a decider that changes a state it was given', () => {
    const changing: Decider<Tally, Count, Counted> = {
      ...tally,
      evolve: (state, event) => ((state.seen as Set<number>).add(event.data.n), state),
    };
    expect(() => deciderSpecification(changing)(counted(1)).when({ type: 'Count', n: 2 }).then([counted(2)])).toThrow(
      /Cannot add on a frozen Set/,
    );
    const assigning: Decider<Tally, Count, Counted> = {
      ...tally,
      decide: (_command, state) => (((state as { total: number }).total = 1), []),
    };
    expect(() => deciderSpecification(assigning)().when({ type: 'Reset' }).thenNothingHappened()).toThrow(TypeError);
  });

  it('freezes Maps, Sets, arrays and objects all the way down', () => {
    const value = frozen({ list: [{ n: 1 }], byName: new Map([['a', { n: 2 }]]) });
    expect(() => value.list.push({ n: 3 })).toThrow(TypeError);
    expect(() => (value.list[0].n = 4)).toThrow(TypeError);
    expect(() => value.byName.set('b', { n: 5 })).toThrow(/Cannot set on a frozen Map/);
    expect(() => (value.byName.get('a')!.n = 6)).toThrow(TypeError);
    expect([...value.byName.keys()]).toEqual(['a']);
  });
});

describe('the deciders of src/', () => {
  const ROOT = join(__dirname, '..', '..');
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ file: `src/${file}`, text: readFileSync(join(ROOT, 'src', file), 'utf8') }));
  const specs = sources.filter(({ file }) => file.endsWith('.spec.ts'));
  const deciders = sources
    .filter(({ file }) => !file.endsWith('.spec.ts'))
    .flatMap(({ file, text }) => [...text.matchAll(/export const (\w+)\s*:\s*Decider</g)].map((m) => ({ file, name: m[1] })));

  it('are each specified given events, when a command, then events or a refusal', () => {
    expect(deciders.map(({ name }) => name)).toEqual(expect.arrayContaining(['rolesDecider', 'userRolesDecider', 'instanceWipeDecider', 'roomDecider']));
    const unspecified = deciders.filter(({ name }) => !specs.some(({ text }) => text.includes(`deciderSpecification(${name})`)));
    expect(unspecified).toEqual([]);
  });

  it('are decided in their specs only through deciderSpecification', () => {
    const direct = specs.flatMap(({ file, text }) =>
      deciders.filter(({ name }) => text.includes(`${name}.decide(`)).map(({ name }) => `${file}: ${name}.decide(…)`),
    );
    expect(direct).toEqual([]);
  });
});

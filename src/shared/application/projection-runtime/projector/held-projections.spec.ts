import { ProjectionDefinition } from '../../../../../projections/projection';
import { HeldProjections } from './held-projections';
import { projectionParts } from './projection-parts';

const at = (n: number) => String(n).padStart(20, '0');
const definition = (name: string): ProjectionDefinition => ({
  name,
  version: 1,
  collections: [{ name }, { name: `${name}_index` }],
  handles: [],
  targets: () => [],
  evolve: (document) => document,
});
const [a, b, c] = projectionParts(['a', 'b', 'c'].map(definition));
const counts = () => ({ events: 0, documents: 0 });

describe('HeldProjections', () => {
  it('takes the projections held at a claim from their checkpoints, and knows where the others stood', () => {
    const held = new HeldProjections();
    const startedEmpty = held.take([a, b], [a, b, c], new Map([['a_v1', at(4)], ['c_v1', at(9)]]), counts);

    expect(held.names).toEqual(['a_v1', 'b_v1']);
    expect([held.holds('a_v1'), held.holds('c_v1')]).toEqual([true, false]);
    expect(startedEmpty).toEqual(['b_v1', 'b_index_v1']);
    expect(held.collections()).toEqual(['a_v1', 'a_index_v1', 'b_v1', 'b_index_v1']);
    expect(['a_v1', 'b_v1', 'c_v1', 'd_v1'].map((name) => held.positionOf(name))).toEqual([at(4), null, at(9), null]);

    held.all[0].position = at(6);
    expect(held.positionOf('a_v1')).toBe(at(6));
    held.clear();
    expect(held.names).toEqual([]);
    expect(held.positionOf('a_v1')).toBe(at(4)); // as of the claim
  });

  it('resumes from the least advanced projection that folds; with none folding, from the most advanced', () => {
    const held = new HeldProjections();
    held.take([a, b, c], [a, b, c], new Map([['a_v1', at(4)], ['b_v1', at(2)], ['c_v1', at(7)]]), counts);
    const all = () => true;
    expect(held.resumeFrom(all)).toBe(at(2));
    expect(held.resumeFrom((name) => name !== 'b_v1')).toBe(at(4));
    expect(held.folding((name) => name !== 'b_v1').map((s) => s.checkpoint)).toEqual(['a_v1', 'c_v1']);
    expect(held.resumeFrom(() => false)).toBe(at(7));

    held.take([a, b], [a, b, c], new Map([['a_v1', at(4)]]), counts);
    expect(held.resumeFrom(all)).toBeNull();
  });
});

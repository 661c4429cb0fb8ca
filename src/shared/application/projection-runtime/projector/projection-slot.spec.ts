import { ProjectionDefinition } from '../../../../../projections/projection';
import { assertOneWriterPerCollection, projectionSlot } from './projection-slot';

const definition = (name: string, version: number, collections: string[]): ProjectionDefinition => ({
  name,
  version,
  collections: collections.map((c) => ({ name: c })),
  handles: ['A', 'B'],
  targets: () => [],
  evolve: (document) => document,
});

describe('projection slots', () => {
  it('name the checkpoint, the events handled and where the version keeps each collection', () => {
    const stats = { events: 4, documents: 2 };
    const slot = projectionSlot(definition('rooms', 3, ['rooms', 'memberships']), '00000000000000000007', stats);
    expect(slot.checkpoint).toBe('rooms_v3');
    expect([...slot.handles]).toEqual(['A', 'B']);
    expect([slot.collection('rooms'), slot.collection('memberships')]).toEqual(['rooms_v3', 'memberships_v3']);
    expect(slot.position).toBe('00000000000000000007');
    expect(slot.stats).toBe(stats);
    expect(projectionSlot(definition('users', 1, ['users']), null).stats).toEqual({ events: 0, documents: 0 });
  });

  it('refuse two projections writing one collection (a failing one could not stop alone)', () => {
    expect(() => assertOneWriterPerCollection([definition('a', 1, ['shared']), definition('b', 1, ['shared'])])).toThrow(
      'Projections a_v1 and b_v1 both write the collection shared_v1',
    );
    // Two versions of one projection write beside each other.
    expect(() => assertOneWriterPerCollection([definition('a', 1, ['shared']), definition('a', 2, ['shared'])])).not.toThrow();
  });
});

import type { RecordedEvent } from '../../src/shared/domain/event';
import type { Document, ProjectionDefinition } from '../../projections/projection';
import { ProjectionEventError } from '../../src/shared/application/projection-runtime/projector/projection-event-error';
import { project } from './projection-fold';

/** An event at log position `at` (events given to `project` are the log: their positions say its order). */
const event = (at: number, type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: `e${at}`,
  streamName: `tally-acme.${String(data.id ?? data.group)}`,
  revision: 0,
  position: String(at).padStart(20, '0'),
  type,
  data,
  metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
  recordedAt: '2026-01-01T00:00:00.000Z',
});
const counted = (at: number, id: string, group = 'g1') => event(at, 'Counted', { id, group });
const reset = (at: number, group: string) => event(at, 'GroupReset', { group });
const failing = (at: number, id: string) => event(at, 'Failing', { id, group: 'g1' });

/** Counts the events of each id; a group reset removes its ids (a selection); `Failing` throws. */
const tallies: ProjectionDefinition = {
  name: 'tallies',
  version: 1,
  collections: [{ name: 'tallies' }],
  handles: ['Counted', 'GroupReset', 'Failing'],
  targets: (e) => {
    const data = e.data as { id?: string; group: string };
    return e.type === 'GroupReset' ? [{ collection: 'tallies', where: { group: data.group } }] : [{ collection: 'tallies', id: data.id! }];
  },
  evolve: (document, e) => {
    if (e.type === 'Failing') throw new Error('no tally for that');
    if (e.type === 'GroupReset') return null;
    const data = e.data as { group: string };
    return { _id: '', group: data.group, n: ((document?.n as number | undefined) ?? 0) + 1 };
  },
};
const counts = (docs: Map<string, Document>) => Object.fromEntries([...docs].map(([key, d]) => [key, d.n]));

describe('projection fold (the runner’s batch folder, for projection specs)', () => {
  it('returns the documents keyed by collection and id, in the order they were first written', async () => {
    const docs = await project(tallies, [counted(1, 'b'), counted(2, 'a'), counted(3, 'b')]);
    expect([...docs.entries()]).toEqual([
      ['tallies|b', { _id: 'b', group: 'g1', n: 2 }],
      ['tallies|a', { _id: 'a', group: 'g1', n: 1 }],
    ]);
  });

  it('folds redelivered events as the runner does: each document skips what it already reflects', async () => {
    const events = [counted(1, 'a'), counted(2, 'b'), counted(3, 'a')];
    const redelivered = await project(tallies, [...events, ...events.slice(1), counted(4, 'b')]);
    expect(counts(redelivered)).toEqual({ 'tallies|a': 2, 'tallies|b': 2 });
  });

  it('answers a selection from the store, with what the batch folded before it', async () => {
    const docs = await project(tallies, [counted(1, 'a'), counted(2, 'b'), counted(3, 'c', 'g2'), reset(4, 'g1'), counted(5, 'a')]);
    expect(counts(docs)).toEqual({ 'tallies|c': 1, 'tallies|a': 1 });
  });

  it('refuses an event new to the call whose position goes back: no log delivers it so', async () => {
    await expect(project(tallies, [counted(2, 'a'), counted(1, 'b')])).rejects.toThrow(
      'Counted e1 (position 00000000000000000001) comes after Counted e2 (position 00000000000000000002): a log delivers events in position order',
    );
  });

  it('fails with the projection’s failure, naming the event, as the runner reports it', async () => {
    const failure = project(tallies, [counted(1, 'a'), failing(2, 'a')]);
    await expect(failure).rejects.toBeInstanceOf(ProjectionEventError);
    await expect(failure).rejects.toThrow('Projection tallies_v1 failed on event Failing at position 00000000000000000002 (tally-acme.a): no tally for that');
  });
});

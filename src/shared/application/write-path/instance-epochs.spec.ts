import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { Decider } from '../../domain/decider';
import { DomainEvent } from '../../domain/event';
import { INSTANCE_WIPED, instanceWipesStream } from '../../domain/instance-wipe';
import { CommandPipeline } from './command-pipeline';
import { InstanceEpochs } from './instance-epochs';
import { ReadYourWrites } from './read-your-writes';

type Counted = DomainEvent<'Counted', { n: number }>;
const counter: Decider<{ n: number }, { type: 'Count' }, Counted> = {
  initialState: () => ({ n: 0 }),
  evolve: (_state, event) => ({ n: event.data.n }),
  decide: (_command, state) => [{ type: 'Counted', data: { n: state.n + 1 } }],
};
/** The same, read backwards from its newest event (the way timelines load). */
const tailCounter = { ...counter, foldsFrom: () => true };
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const answered: ReadYourWrites = { waitFor: async () => undefined };

describe('the command pipeline after an instance wipe', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-epochs-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL', lockTimeoutMs: 100 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const wipe = async (instanceId: string) =>
    (await store.append(instanceWipesStream(instanceId), [{ type: INSTANCE_WIPED, data: {}, metadata: meta }], 'any')).position;

  it('folds entity streams from after the wipe, appends on their real revision, and leaves other instances and instance-level streams alone', async () => {
    const epochs = new InstanceEpochs(store);
    const pipeline = new CommandPipeline(store, answered, epochs);
    for (const stream of ['count-acme.a', 'count-acme.b', 'count-other.a', 'messageids-acme']) {
      await pipeline.run(stream, stream.endsWith('.b') ? tailCounter : counter, { type: 'Count' }, meta);
      await pipeline.run(stream, stream.endsWith('.b') ? tailCounter : counter, { type: 'Count' }, meta);
    }
    epochs.record('acme', await wipe('acme'));

    expect((await pipeline.load('count-acme.a', counter)).state).toEqual({ n: 0 });
    expect((await pipeline.load('count-acme.b', tailCounter)).state).toEqual({ n: 0 });
    expect((await pipeline.load('count-other.a', counter)).state).toEqual({ n: 2 });
    expect((await pipeline.load('messageids-acme', counter)).state).toEqual({ n: 2 });
    await pipeline.run('count-acme.a', counter, { type: 'Count' }, meta);
    await pipeline.run('count-acme.b', tailCounter, { type: 'Count' }, meta);
    expect((await store.readStream('count-acme.a')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 1 }]);
    expect((await store.readStream('count-acme.b')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 1 }]);
  });

  it("starts a wiped stream from the decider's wipedState, and a stream of an instance never wiped from its initialState", async () => {
    const leftEmpty = { ...counter, initialState: () => ({ n: 10 }), wipedState: () => ({ n: -1 }) };
    const epochs = new InstanceEpochs(store);
    const pipeline = new CommandPipeline(store, answered, epochs);
    expect((await pipeline.load('count-acme.a', leftEmpty)).state).toEqual({ n: 10 });
    await pipeline.run('count-acme.a', leftEmpty, { type: 'Count' }, meta);
    epochs.record('acme', await wipe('acme'));
    expect((await pipeline.load('count-acme.a', leftEmpty)).state).toEqual({ n: -1 });
    await pipeline.run('count-acme.a', leftEmpty, { type: 'Count' }, meta);
    expect((await store.readStream('count-acme.a')).map((e) => e.data)).toEqual([{ n: 11 }, { n: 0 }]);
    expect((await pipeline.load('count-other.a', leftEmpty)).state).toEqual({ n: 10 });
  });

  it('another process learns of the wipe from the log: at its first write of the instance, or through the live log', async () => {
    await new CommandPipeline(store, answered).run('count-acme.a', counter, { type: 'Count' }, meta);
    await wipe('acme');
    const fresh = new CommandPipeline(store, answered, new InstanceEpochs(store));
    expect((await fresh.load('count-acme.a', counter)).state).toEqual({ n: 0 });

    const epochs = new InstanceEpochs(store);
    const warm = new CommandPipeline(store, answered, epochs);
    await warm.run('count-acme.a', counter, { type: 'Count' }, meta); // folded before this process heard of a second wipe
    await wipe('acme');
    const [, newest] = await store.readStream(instanceWipesStream('acme'));
    epochs.observe(newest); // what the wipe module's live-log listener does
    expect((await warm.load('count-acme.a', counter)).state).toEqual({ n: 0 });
  });
});

import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { Decider } from '../domain/decider';
import { DomainError } from '../domain/errors';
import { DomainEvent } from '../domain/event';
import { EventStore } from '../ports/event-store.port';
import { CommandPipeline } from './command-pipeline';
import { AwaitedProjections, ReadYourWrites } from './read-your-writes';

type Counted = DomainEvent<'Counted', { n: number }>;
const counter: Decider<{ n: number }, { type: 'Count' }, Counted> = {
  initialState: () => ({ n: 0 }),
  evolve: (state, event) => ({ n: event.data.n }),
  decide: (_command, state) => [{ type: 'Counted', data: { n: state.n + 1 } }],
};
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const answered: ReadYourWrites = { waitFor: async () => undefined };

/** The answer a command gets, as the HTTP layer would show it. */
const answerOf = async (outcome: Promise<unknown>) => {
  try {
    await outcome;
    return 'ok';
  } catch (error) {
    return error instanceof DomainError ? `${error.code}: ${error.description}` : `unexpected: ${String(error)}`;
  }
};

describe('CommandPipeline answers truthfully about the log', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-pipeline-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL', lockTimeoutMs: 100 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an append that cannot write says "not saved", and nothing is in the log', async () => {
    const pipeline = new CommandPipeline(store, answered);
    await pipeline.run('count-a', counter, { type: 'Count' }, meta);
    const holder = new Database(join(dir, 'events.sqlite'));
    holder.exec('BEGIN IMMEDIATE');
    try {
      expect(await answerOf(pipeline.run('count-a', counter, { type: 'Count' }, meta))).toBe(
        'unavailable/storage_unavailable: The change was not saved: the event log is locked by another process; it is safe to retry',
      );
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect((await store.readStream('count-a')).map((e) => e.data)).toEqual([{ n: 1 }]);
    // The cached state was not advanced by the failed decision: the next command counts on.
    await pipeline.run('count-a', counter, { type: 'Count' }, meta);
    expect((await store.readStream('count-a')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('an append whose acknowledgement is lost after the store wrote it is read back and answered as written', async () => {
    // A store that writes and then fails to answer, as a connection lost after the server committed.
    const lostAck = new Proxy(store as EventStore, {
      get: (target, name) =>
        name === 'append'
          ? async (...args: Parameters<EventStore['append']>) => {
              await target.append(...args);
              throw new Error('connection reset');
            }
          : Reflect.get(target, name, target).bind(target),
    });
    const pipeline = new CommandPipeline(lostAck, answered);
    const outcome = await pipeline.run('count-b', counter, { type: 'Count' }, meta);
    const [stored] = await store.readStream('count-b');
    expect(outcome.position).toBe(stored.position);
    expect(stored.data).toEqual({ n: 1 });
  });

  it('an append whose flush to disk failed says "may or may not be saved", not "saved" from reading it back', async () => {
    const failing = new SqliteEventStore(join(dir, 'flush-fails.sqlite'), {
      walFlush: {
        fdatasync: (_fd, done) => done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })),
        fdatasyncSync: () => undefined,
      },
    });
    try {
      const pipeline = new CommandPipeline(failing, answered);
      expect(await answerOf(pipeline.run('count-f', counter, { type: 'Count' }, meta))).toBe(
        'unavailable/storage_unavailable: The event log failed during the write (the event log could not be flushed to disk (EIO)): the change may or may not be saved; read it before retrying',
      );
      // It was written: a command deciding on the stream sees it (and so the text is true either way).
      expect((await failing.readStream('count-f')).map((e) => e.data)).toEqual([{ n: 1 }]);
    } finally {
      await failing.close();
    }
  });

  it('a failure after the append says the change was saved, whatever failed', async () => {
    const unreachable: ReadYourWrites = { waitFor: async () => Promise.reject(new Error('read models unreachable')) };
    const pipeline = new CommandPipeline(store, unreachable);
    expect(await answerOf(pipeline.run('count-c', counter, { type: 'Count' }, meta))).toMatch(
      /^unavailable\/projection_lag: The change was saved, /,
    );
    expect(await store.readStream('count-c')).toHaveLength(1);
  });

  it('waits for the projections the command names, for none when it names none, and else for those folding what it appended', async () => {
    const waits: (AwaitedProjections | undefined)[] = [];
    const recording: ReadYourWrites = { waitFor: async (_position, projections) => void waits.push(projections) };
    const pipeline = new CommandPipeline(store, recording);
    await pipeline.run('count-d', counter, { type: 'Count' }, meta, { awaitProjections: ['messages_v1'] });
    await pipeline.run('count-d', counter, { type: 'Count' }, meta, { awaitProjections: [] });
    await pipeline.run('count-d', counter, { type: 'Count' }, meta);
    expect(waits).toEqual([['messages_v1'], { folding: ['Counted'] }]);
  });

  it('a log that cannot be read says nothing was changed', async () => {
    const pipeline = new CommandPipeline(store, answered);
    await store.close();
    expect(await answerOf(pipeline.run('count-e', counter, { type: 'Count' }, meta))).toBe(
      'unavailable/storage_unavailable: The event log could not be read: the event log is closed; nothing was changed, it is safe to retry',
    );
  });
});

import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { Decider } from '../../domain/decider';
import { conflict, DomainError } from '../../domain/errors';
import { DomainEvent } from '../../domain/event';
import { AppendOutcomeUnknownError, EventStore, EventStoreUnavailableError } from '../../ports/event-store.port';
import { actingInRequest } from '../../observability/request-context';
import { CommandPipeline } from './command-pipeline';
import { AwaitedProjections, ReadYourWrites } from './read-your-writes';
import { refusingAppendsOver, withOverrides } from '../../../../test/support/event-store-overrides';

type Counted = DomainEvent<'Counted', { n: number }>;
const counter: Decider<{ n: number }, { type: 'Count' }, Counted> = {
  initialState: () => ({ n: 0 }),
  evolve: (state, event) => ({ n: event.data.n }),
  decide: (_command, state) => [{ type: 'Counted', data: { n: state.n + 1 } }],
};
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

type Said = DomainEvent<'Said', { text: string }>;
/** Each command writes its text as one event: a command's size is its text's. */
const sayer: Decider<{ said: number }, { type: 'Say'; text: string }, Said> = {
  initialState: () => ({ said: 0 }),
  evolve: (state) => ({ said: state.said + 1 }),
  decide: (command) => [{ type: 'Said', data: { text: command.text } }],
};
const say = (text: string) => ({ type: 'Say' as const, text });
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
    const lostAck = withOverrides(store, {
      append: async (...args: Parameters<EventStore['append']>) => {
        await store.append(...args);
        throw new Error('connection reset');
      },
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

  it('an append the store could not confirm in time (it may land later) says "may or may not be saved", never "safe to retry"', async () => {
    const timedOut = withOverrides(store, {
      append: async () => {
        throw new AppendOutcomeUnknownError('EventStoreDB did not confirm the write in time', { foundMeansKept: true });
      },
    });
    const pipeline = new CommandPipeline(timedOut, answered);
    expect(await answerOf(pipeline.run('count-g', counter, { type: 'Count' }, meta))).toBe(
      'unavailable/storage_unavailable: The event log failed during the write (EventStoreDB did not confirm the write in time): the change may or may not be saved; read it before retrying',
    );
  });

  it('an unconfirmed append that is in the log when read back is answered as written', async () => {
    const confirmedLate = withOverrides(store, {
      append: async (...args: Parameters<EventStore['append']>) => {
        await store.append(...args);
        throw new AppendOutcomeUnknownError('EventStoreDB did not confirm the write in time', { foundMeansKept: true });
      },
    });
    const outcome = await new CommandPipeline(confirmedLate, answered).run('count-h', counter, { type: 'Count' }, meta);
    const [stored] = await store.readStream('count-h');
    expect(outcome.position).toBe(stored.position);
  });

  it('a store that says it wrote nothing (unreachable) answers "not saved" without reading back', async () => {
    // Reads fail too once the append has (a server gone): only the append's own answer can tell.
    let appendFailed = false;
    const unreachable = withOverrides(store, {
      append: async () => {
        appendFailed = true;
        throw new EventStoreUnavailableError('EventStoreDB is unreachable');
      },
      readStream: async (...args: Parameters<EventStore['readStream']>) => (appendFailed ? Promise.reject(new Error('unreachable')) : store.readStream(...args)),
    });
    expect(await answerOf(new CommandPipeline(unreachable, answered).run('count-i', counter, { type: 'Count' }, meta))).toBe(
      'unavailable/storage_unavailable: The change was not saved: EventStoreDB is unreachable; it is safe to retry',
    );
  });

  it('a refusal the store explains (a permanently deleted stream) is answered as it is, not as an outage', async () => {
    const deleted = withOverrides(store, {
      append: async () => {
        throw conflict('stream_deleted', 'The resource was deleted permanently from the event log; nothing was written, and its id cannot be used again');
      },
    });
    expect(await answerOf(new CommandPipeline(deleted, answered).run('count-j', counter, { type: 'Count' }, meta))).toBe(
      'conflict/stream_deleted: The resource was deleted permanently from the event log; nothing was written, and its id cannot be used again',
    );
  });
});

describe('CommandPipeline keeps each append under the store\'s largest', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-pipeline-bytes-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Commands sent together to one stream, as concurrent sends to a busy room arrive. */
  const sendAll = (pipeline: CommandPipeline, stream: string, texts: readonly string[]) =>
    Promise.all(texts.map((text) => answerOf(pipeline.run(stream, sayer, say(text), meta))));

  it('a busy stream\'s queued commands go in appends under the limit, every one saved in order', async () => {
    // 40 commands of about 500 bytes against a 4 KiB limit (EventStoreDB: 1 MiB against 500 queued sends).
    const limited = refusingAppendsOver(store, 4096);
    const appends: number[] = [];
    const counted = withOverrides(limited, {
      append: async (...args: Parameters<EventStore['append']>) => {
        appends.push(args[1].length);
        return limited.append(...args);
      },
    });
    const texts = Array.from({ length: 40 }, (_, i) => `${i}:${'x'.repeat(400)}`);
    expect(await sendAll(new CommandPipeline(counted, answered), 'say-a', texts)).toEqual(texts.map(() => 'ok'));
    expect(limited.refused).toBe(0);
    expect(appends.length).toBeGreaterThan(4); // more than one group...
    expect(appends.length).toBeLessThan(texts.length); // ...of several commands
    expect((await store.readStream('say-a')).map((e) => (e.data as { text: string }).text)).toEqual(texts);
  });

  it('a store whose limit is lower than it says: the refused group is sent again in parts, every command saved', async () => {
    const limited = refusingAppendsOver(store, 4096, 64 * 1024);
    const texts = Array.from({ length: 40 }, (_, i) => `${i}:${'x'.repeat(400)}`);
    expect(await sendAll(new CommandPipeline(limited, answered), 'say-b', texts)).toEqual(texts.map(() => 'ok'));
    expect(limited.refused).toBeGreaterThan(0);
    expect((await store.readStream('say-b')).map((e) => (e.data as { text: string }).text)).toEqual(texts);
  });

  it('one command larger than the limit alone answers 413, nothing of it saved; the others are saved', async () => {
    const pipeline = new CommandPipeline(refusingAppendsOver(store, 4096), answered);
    const texts = ['before', 'y'.repeat(5_000), 'after'];
    const answers = await sendAll(pipeline, 'say-c', texts);
    expect(answers[0]).toBe('ok');
    expect(answers[1]).toMatch(/^payload_too_large\/change_too_large: The change is larger than the event log accepts in one write \(\d+ bytes of events, at most 4096\); nothing was saved$/);
    expect(answers[2]).toBe('ok');
    expect((await store.readStream('say-c')).map((e) => (e.data as { text: string }).text)).toEqual(['before', 'after']);
  });
});

describe('CommandPipeline.buildAndRun: commands built from the state they are decided on', () => {
  let dir: string;
  let store: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-pipeline-build-'));
    store = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  type Numbered = DomainEvent<'Numbered', { n: number }>;
  /** Numbers only grow: a number at or below the last is out of date. */
  const sequence: Decider<{ last: number }, { type: 'Take'; n: number }, Numbered> = {
    initialState: () => ({ last: 0 }),
    evolve: (_state, event) => ({ last: event.data.n }),
    outdated: (command, state) => command.n <= state.last,
    decide: (command) => [{ type: 'Numbered', data: { n: command.n } }],
  };

  it('builds the command on the stream as it stands, answers what was decided, and waits for the projections it names', async () => {
    await store.append('seq-a', [{ type: 'Numbered', data: { n: 41 }, metadata: meta }], 'no_stream');
    const waits: (AwaitedProjections | undefined)[] = [];
    const pipeline = new CommandPipeline(store, { waitFor: async (_position, projections) => void waits.push(projections) });
    const outcome = await pipeline.buildAndRun(
      'seq-a',
      sequence,
      async (state) => ({ command: { type: 'Take', n: state.last + 1 }, metadata: meta }),
      { awaitProjections: ['messages_v1'] },
    );
    expect(outcome.events).toEqual([{ type: 'Numbered', data: { n: 42 } }]);
    expect(outcome.state).toEqual({ last: 42 });
    expect(waits).toEqual([['messages_v1']]);
    expect((await store.readStream('seq-a')).map((e) => e.data)).toEqual([{ n: 41 }, { n: 42 }]);
  });

  it('run and buildAndRun stamp the events with the HTTP request their actor acts in (joining the audit trail to the access log)', async () => {
    const pipeline = new CommandPipeline(store, answered);
    const actor = actingInRequest({ user_id: 'ann' }, 'req-7');
    await pipeline.run('count-s', counter, { type: 'Count' }, { ...meta, actor });
    await pipeline.buildAndRun('seq-s', sequence, async (state) => ({ command: { type: 'Take', n: state.last + 1 }, metadata: { ...meta, actor } }));
    await pipeline.run('count-s', counter, { type: 'Count' }, { ...meta, actor: { user_id: 'cli' } });
    const requestIds = async (stream: string) => (await store.readStream(stream)).map((e) => e.metadata.request_id);
    expect(await requestIds('count-s')).toEqual(['req-7', undefined]);
    expect(await requestIds('seq-s')).toEqual(['req-7']);
  });

  it('a builder that refuses answers its refusal, nothing saved', async () => {
    const pipeline = new CommandPipeline(store, answered);
    const refusing = pipeline.buildAndRun('seq-r', sequence, async () => Promise.reject(conflict('no_number', 'No number left')));
    expect(await answerOf(refusing)).toBe('conflict/no_number: No number left');
    expect(await store.readStream('seq-r')).toEqual([]);
  });
});

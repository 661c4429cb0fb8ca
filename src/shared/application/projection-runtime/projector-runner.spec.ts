import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { ALL_PROJECTIONS } from '../../../../projections';
import { checkpointName, physicalCollection } from '../../../../projections/projection';
import { USERS, userDocumentId } from '../../../../projections/users/users.projection';
import { MEMBERSHIPS } from '../../../../projections/rooms/memberships.projection';
import { MESSAGES } from '../../../../projections/messages/messages.projection';
import type { ProjectionDefinition } from '../../../../projections/projection';
import { usersProjection } from '../../../../projections/users/users.projection';
import { BatchTooLargeError, DocumentChange, LeaseFence } from '../../ports/read-model-store.port';
import { ProjectorRunner } from './projector-runner';
import { ProjectionWatch } from './projection-watch';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { eventually } from '../../../../test/support/waiting';
import { slowCount } from '../../../../test/support/slow-count';

/** A projection of `Tick` events counting them per stream, each fold taking `foldMs` synchronously, as a busy machine's might. */
const slowProjection = (foldMs: number): ProjectionDefinition => ({
  name: 'slow',
  version: 1,
  collections: [{ name: 'slow' }],
  handles: ['Tick'],
  targets: (event) => [{ collection: 'slow', id: event.streamName }],
  evolve: slowCount(foldMs),
});

/** The runner writes to versioned collections; this spec reads the store underneath. */
const PHYSICAL_USERS = physicalCollection(USERS, 1);
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

describe('ProjectorRunner over SQLite', () => {
  let stores: SqliteStores;
  let events: SqliteEventStore;
  let readModels: SqliteReadModelStore;
  beforeEach(() => ({ events, readModels } = stores = openSqliteStores('parley-runner-')));
  afterEach(() => stores.close());

  const seed = async () => {
    await events.append('user-acme.ann', [{ type: 'UserCreated', data: { id: 'ann', name: 'A', created_at: 't1' }, metadata: meta }], 'no_stream');
    await events.append('user-acme.ann', [{ type: 'UserUpdated', data: { name: 'B', updated_at: 't2' }, metadata: meta }], 0);
    await events.append(
      'room-acme.r1',
      [{ type: 'RoomMembersAdded', data: { members: [{ user_id: 'ann', user_created_at: 't1' }], added_at: 't3' }, metadata: meta }],
      'no_stream',
    );
  };

  it('folds the log, stores each checkpoint and serves read-your-writes', async () => {
    await seed();
    const runner = new ProjectorRunner(events, readModels, ALL_PROJECTIONS);
    await runner.start();
    await runner.caughtUp();
    const head = (await events.headPosition())!;
    for (const p of ALL_PROJECTIONS) expect(await readModels.getCheckpoint(checkpointName(p))).toBe(head);
    expect(await readModels.get(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toMatchObject({ name: 'B' });

    const { position } = await events.append(
      'user-acme.ann',
      [{ type: 'UserUpdated', data: { name: 'C', updated_at: 't4' }, metadata: meta }],
      1,
    );
    await new ProjectionWatch(readModels, ALL_PROJECTIONS.map(checkpointName), runner, 5_000).waitFor(position);
    expect(await readModels.get(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toMatchObject({ name: 'C' });
    await runner.stop();
  });

  it('has the store overwrite freed space after a batch that destroys content, and only then', async () => {
    let overwrites = 0;
    const overwrite = readModels.overwriteFreedSpace.bind(readModels);
    readModels.overwriteFreedSpace = async () => {
      overwrites++;
      await overwrite();
    };
    const runner = new ProjectorRunner(events, readModels, [usersProjection]);
    await runner.start();
    const watch = new ProjectionWatch(readModels, [checkpointName(usersProjection)], runner, 5_000);
    await seed();
    await watch.waitFor((await events.headPosition())!);
    expect(overwrites).toBe(0);
    const { position } = await events.append('user-acme.ann', [{ type: 'UserDeleted', data: { deleted_at: 't5' }, metadata: meta }], 1);
    await watch.waitFor(position);
    expect(overwrites).toBe(1);
    await runner.stop();
  });

  it('shows a destroying batch as folded (read-your-writes) only once its freed space is overwritten', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let overwriting = false;
    const overwrite = readModels.overwriteFreedSpace.bind(readModels);
    readModels.overwriteFreedSpace = async () => {
      overwriting = true;
      await released;
      await overwrite();
    };
    const runner = new ProjectorRunner(events, readModels, [usersProjection]);
    await runner.start();
    const watch = new ProjectionWatch(readModels, [checkpointName(usersProjection)], runner, 5_000);
    await seed();
    await watch.waitFor((await events.headPosition())!);
    const { position } = await events.append('user-acme.ann', [{ type: 'UserDeleted', data: { deleted_at: 't5' }, metadata: meta }], 1);
    await eventually(() => overwriting);
    // The batch is written; a write waiting for it (a delete's answer) is not answered while its content may still be in the files.
    let answered = false;
    const waited = watch.waitFor(position).then(() => (answered = true));
    try {
      await new Promise((resolve) => setImmediate(resolve));
      expect(answered).toBe(false);
    } finally {
      release();
    }
    await waited;
    expect(runner.positionOf(checkpointName(usersProjection))).toBe(position);
    await runner.stop();
  });

  it('ignores redelivered events: a rewound checkpoint changes no document', async () => {
    await seed();
    const first = new ProjectorRunner(events, readModels, [usersProjection]);
    await first.start();
    await first.caughtUp();
    await first.stop();
    const before = await readModels.getStored(PHYSICAL_USERS, userDocumentId('acme', 'ann'));

    // Redeliver everything, as after a crash between a write and its checkpoint.
    await readModels.applyBatch([], { [checkpointName(usersProjection)]: '0'.padStart(20, '0') });
    const again = new ProjectorRunner(events, readModels, [usersProjection]);
    await again.start();
    await again.caughtUp();
    await again.stop();
    expect(await readModels.getStored(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toEqual(before);
    expect(before?.document).toMatchObject({ name: 'B' });
  });

  it('lets one runner hold a projection: a second one waits for the lease', async () => {
    await seed();
    const a = new ProjectorRunner(events, readModels, ALL_PROJECTIONS, { owner: 'a' });
    const b = new ProjectorRunner(events, readModels, ALL_PROJECTIONS, { owner: 'b' });
    await a.start();
    await b.start();
    expect(a.running).toHaveLength(ALL_PROJECTIONS.length);
    expect(b.running).toEqual([]);
    await a.stop();
    await b.stop();
  });

  it('applies selections after earlier changes of the same batch', async () => {
    await seed();
    await events.append('user-acme.ann', [{ type: 'UserDeleted', data: { deleted_at: 't5' }, metadata: meta }], 1);
    const runner = new ProjectorRunner(events, readModels, ALL_PROJECTIONS);
    await runner.start();
    await runner.caughtUp();
    expect(await readModels.find(physicalCollection(MEMBERSHIPS, 1), { where: { user_id: 'ann' } })).toEqual([]);
    expect(await readModels.get(PHYSICAL_USERS, userDocumentId('acme', 'ann'))).toBeNull();
    await runner.stop();
  });

  /** A log that touches documents by key and by selection, several times within any batch. */
  const seedVaried = async () => {
    const user = (id: string) => events.append(`user-acme.${id}`, [{ type: 'UserCreated', data: { id, name: id, created_at: 't' }, metadata: meta }], 'no_stream');
    await user('ann');
    await user('bob');
    for (const room of ['r1', 'r2']) {
      await events.append(
        `room-acme.${room}`,
        [
          { type: 'RoomCreated', data: { id: room, name: room, private: false, created_at: 't' }, metadata: meta },
          { type: 'RoomMembersAdded', data: { members: [{ user_id: 'ann' }, { user_id: 'bob' }], added_at: 't' }, metadata: meta },
        ],
        'no_stream',
      );
    }
    const send = (room: string, id: number) =>
      events.append(
        `messages-acme.${room}`,
        [{ type: 'MessageSent', data: { id, user_id: 'ann', parts: [{ type: 'text/plain', content: `m${id}` }], created_at: `t${id}` }, metadata: meta }],
        'any',
      );
    for (let id = 1; id <= 6; id++) await send(id % 2 ? 'r1' : 'r2', id);
    await events.append('message-acme.r2.2', [{ type: 'MessageEdited', data: { id: 2, room_id: 'r2', parts: [{ type: 'text/plain', content: 'edited' }], updated_at: 'u' }, metadata: meta }], 'any');
    await events.append('message-acme.r2.4', [{ type: 'MessageDeleted', data: { id: 4, room_id: 'r2', deleted_at: 'd', tombstone: true }, metadata: meta }], 'any');
    await events.append('user-acme.bob', [{ type: 'UserDeleted', data: { deleted_at: 'd' }, metadata: meta }], 0);
    await send('r1', 7);
    await events.append('room-acme.r1', [{ type: 'RoomDeleted', data: { deleted_at: 'd' }, metadata: meta }], 1);
    await send('r2', 8);
    await events.append('message-acme.r2.8', [{ type: 'MessageEdited', data: { id: 8, room_id: 'r2', parts: [{ type: 'text/plain', content: 'edited 8' }], updated_at: 'u' }, metadata: meta }], 'any');
  };

  const everything = async (store: SqliteReadModelStore) => {
    const all: Record<string, unknown> = {};
    for (const p of ALL_PROJECTIONS) {
      for (const c of p.collections) {
        const name = physicalCollection(c.name, p.version);
        all[name] = (await store.findStored(name)).sort((a, b) => a.document._id.localeCompare(b.document._id));
      }
      all[`checkpoint ${checkpointName(p)}`] = await store.getCheckpoint(checkpointName(p));
    }
    return all;
  };

  it('folds a whole page into the same documents and checkpoints as one event at a time', async () => {
    await seedVaried();
    const byEvent = new SqliteReadModelStore(join(stores.dir, 'by-event.sqlite'));
    try {
      for (const [store, catchUpPage] of [[readModels, 1_000], [byEvent, 1]] as const) {
        const runner = new ProjectorRunner(events, store, ALL_PROJECTIONS, { catchUpPage });
        await runner.start();
        await runner.caughtUp();
        await runner.stop();
      }
      const paged = await everything(readModels);
      expect(paged).toEqual(await everything(byEvent));
      // The fixture did reach every case: edits, a tombstone, deletions by selection.
      const messages = paged[physicalCollection(MESSAGES, 1)] as { document: { id: number; parts: { content: string }[] } }[];
      expect(messages.map((m) => [m.document.id, m.document.parts[0].content]).sort()).toEqual([
        [2, 'edited'],
        [4, 'DELETED'],
        [6, 'm6'],
        [8, 'edited 8'],
      ]);
      expect((paged[physicalCollection(MEMBERSHIPS, 1)] as unknown[]).length).toBe(1); // ann in r2
    } finally {
      await byEvent.close();
    }
  });

  /** Folds the whole log into `store` by pages of 1,000 events, noting every drop. */
  const foldAll = async (store: SqliteReadModelStore, errors: unknown[]) => {
    const runner = new ProjectorRunner(events, store, ALL_PROJECTIONS, { catchUpPage: 1_000, onError: (error) => errors.push(error) });
    try {
      await runner.start();
      await runner.caughtUp();
    } finally {
      await runner.stop();
    }
  };

  /** The real store, noting what each write carried. */
  class NotingStore extends SqliteReadModelStore {
    readonly writes: { changes: number; bytes: number; checkpoints: number }[] = [];
    /** Like MongoDB refusing a transaction too large for its cache: writes of more changes are refused whole. */
    refuseOver = Infinity;
    refused = 0;
    override async applyBatch(changes: readonly DocumentChange[], checkpoints: Readonly<Record<string, string>>, fences?: readonly LeaseFence[]) {
      if (changes.length > this.refuseOver) {
        this.refused++;
        throw new BatchTooLargeError(`${changes.length} changes are too many`);
      }
      await super.applyBatch(changes, checkpoints, fences);
      const bytes = changes.reduce((sum, c) => sum + (c.kind === 'put' ? JSON.stringify(c.document).length : 0), 0);
      this.writes.push({ changes: changes.length, bytes, checkpoints: Object.keys(checkpoints).length });
    }
  }

  it("splits its writes at the store's bound, within an event if need be, into the same documents and checkpoints", async () => {
    await seedVaried();
    const errors: unknown[] = [];
    const byCount = new NotingStore(join(stores.dir, 'by-count.sqlite'), { batchLimit: { changes: 2, bytes: 1_000_000 } });
    const byBytes = new NotingStore(join(stores.dir, 'by-bytes.sqlite'), { batchLimit: { changes: 1_000, bytes: 600 } });
    const whole = new NotingStore(join(stores.dir, 'whole.sqlite'));
    try {
      for (const store of [byCount, byBytes, whole]) await foldAll(store, errors);
      expect(errors).toEqual([]);
      const expected = await everything(whole);
      expect(await everything(byCount)).toEqual(expected);
      expect(await everything(byBytes)).toEqual(expected);
      // Unbounded, the page is written whole between selections; bounded, in many writes, each
      // within the bound (deleting room r1 selects its four messages: one event, two writes).
      const unbounded = whole.writes.filter((w) => w.changes > 0);
      expect(Math.max(...unbounded.map((w) => w.changes))).toBeGreaterThan(10);
      expect(Math.max(...byCount.writes.map((w) => w.changes))).toBe(2);
      expect(byCount.writes.filter((w) => w.changes > 0).length).toBeGreaterThan(unbounded.length + 10);
      const largest = Math.max(...(await Promise.all(ALL_PROJECTIONS.flatMap((p) => p.collections.map((c) => whole.find(physicalCollection(c.name, p.version))))))
        .flat()
        .map((d) => JSON.stringify(d).length));
      expect(byBytes.writes.filter((w) => w.changes > 0).length).toBeGreaterThan(2);
      for (const w of byBytes.writes) expect(w.bytes).toBeLessThan(600 + largest);
    } finally {
      for (const store of [byCount, byBytes, whole]) await store.close();
    }
  });

  it('halves its writes when the store refuses one as too large, without dropping, into the same documents', async () => {
    await seedVaried();
    const errors: unknown[] = [];
    const refusing = new NotingStore(join(stores.dir, 'refusing.sqlite'));
    refusing.refuseOver = 3;
    const whole = new NotingStore(join(stores.dir, 'whole.sqlite'));
    try {
      for (const store of [refusing, whole]) await foldAll(store, errors);
      expect(errors).toEqual([]);
      expect(refusing.refused).toBeGreaterThan(0);
      expect(Math.max(...refusing.writes.map((w) => w.changes))).toBeLessThanOrEqual(3);
      expect(await everything(refusing)).toEqual(await everything(whole));
    } finally {
      await refusing.close();
      await whole.close();
    }
  });

  it('keeps its lease through a catch-up that lasts several lease times (the event loop turns between pages)', async () => {
    const slow = slowProjection(2);
    await events.append('tick-acme.t', Array.from({ length: 2000 }, () => ({ type: 'Tick', data: {}, metadata: meta })), 'any');
    const errors: unknown[] = [];
    const runner = new ProjectorRunner(events, readModels, [slow], {
      // A page takes about 20 ms of CPU, the whole catch-up about 4 s: four lease times, with
      // room for a page to take twenty times longer on a busy machine before a renewal is late.
      catchUpPage: 10,
      leaseTtlMs: 1_000,
      onError: (error) => errors.push(error),
    });
    await runner.start();
    await runner.caughtUp();
    await runner.stop();
    expect(errors).toEqual([]);
    expect(await readModels.get(physicalCollection('slow', 1), 'tick-acme.t')).toEqual({ _id: 'tick-acme.t', n: 2000 });
  });

  it('keeps its lease through pages that each last longer than it, and writes every page', async () => {
    const slow = slowProjection(70);
    await events.append('tick-acme.t', Array.from({ length: 100 }, () => ({ type: 'Tick', data: {}, metadata: meta })), 'any');
    const errors: unknown[] = [];
    let failed: () => void = () => undefined;
    const failure = new Promise<void>((resolve) => (failed = resolve));
    const runner = new ProjectorRunner(events, readModels, [slow], {
      // A page takes 3.5 s, folded and written without a turn of the event loop: over a lease
      // time. Renewed every second, the lease survives a stall of the test process of almost 2 s.
      catchUpPage: 50,
      leaseTtlMs: 3_000,
      onError: (error) => {
        errors.push(error);
        failed();
      },
    });
    await runner.start();
    await Promise.race([runner.caughtUp(), failure]);
    await runner.stop();
    expect(errors.map(String)).toEqual([]);
    expect(await readModels.get(physicalCollection('slow', 1), 'tick-acme.t')).toEqual({ _id: 'tick-acme.t', n: 100 });
  });

  it('parks a projection on the first event of a batch that fails it, whether in targets or in evolve', async () => {
    const failing: ProjectionDefinition = {
      name: 'failing',
      version: 1,
      collections: [{ name: 'failing' }],
      handles: ['Boom'],
      targets: (event) => {
        if ((event.data as { in: string }).in === 'targets') throw new Error('targets failed');
        return [{ collection: 'failing', id: event.streamName }];
      },
      evolve: (_document, event) => {
        if ((event.data as { in: string }).in === 'evolve') throw new Error('evolve failed');
        return { _id: '' };
      },
    };
    await events.append('boom-acme.ok', [{ type: 'Boom', data: { in: 'none' }, metadata: meta }], 'no_stream');
    const { position: first } = await events.append('boom-acme.a', [{ type: 'Boom', data: { in: 'evolve' }, metadata: meta }], 'no_stream');
    await events.append('boom-acme.b', [{ type: 'Boom', data: { in: 'targets' }, metadata: meta }], 'no_stream');
    const errors: unknown[] = [];
    const runner = new ProjectorRunner(events, readModels, [failing, usersProjection], {
      maxEventAttempts: 1,
      onError: (error, context) => context.parked && errors.push(error),
    });
    await runner.start();
    await runner.caughtUp();
    const status = runner.status().find((s) => s.name === 'failing_v1');
    expect(status).toMatchObject({ state: 'parked', failedEvent: { position: first, type: 'Boom', stream: 'boom-acme.a' } });
    expect(String(errors[0])).toContain('evolve failed');
    await runner.stop();
  });
});

describe('ProjectorRunner: a failing projection stops alone (real SQLite)', () => {
  let stores: SqliteStores;
  let events: SqliteEventStore;
  let readModels: SqliteReadModelStore;
  beforeEach(() => ({ events, readModels } = stores = openSqliteStores('parley-runner-failing-')));
  afterEach(() => stores.close());

  /** Counts `Boom` events per stream; one with `bad` data fails its evolve every time. */
  const fragile: ProjectionDefinition = {
    name: 'fragile',
    version: 1,
    collections: [{ name: 'fragile' }],
    handles: ['Boom'],
    targets: (event) => [{ collection: 'fragile', id: event.streamName }],
    evolve: (document, event) => {
      if ((event.data as { bad?: boolean }).bad) throw new Error('malformed Boom');
      return { _id: '', n: ((document?.n as number | undefined) ?? 0) + 1 };
    },
  };
  const boom = (stream: string, bad = false) => events.append(stream, [{ type: 'Boom', data: { bad }, metadata: meta }], 'any');
  const user = (id: string) =>
    events.append(`user-acme.${id}`, [{ type: 'UserCreated', data: { id, name: id, created_at: 't' }, metadata: meta }], 'no_stream');
  const userFolded = async (id: string) => (await readModels.get(PHYSICAL_USERS, userDocumentId('acme', id))) !== null;

  it('while it waits to retry, the others fold the same batch and everything after it, and none is dropped', async () => {
    await boom('boom-acme.a');
    await user('ann');
    const { position: failing } = await boom('boom-acme.b', true);
    await user('bob');
    const errors: { projection?: string; parked?: boolean }[] = [];
    // The retry is a minute away: whatever folds during this test folds beside a failing projection.
    const runner = new ProjectorRunner(events, readModels, [fragile, usersProjection], {
      maxEventAttempts: 3,
      backoff: { initialMs: 60_000, maxMs: 60_000 },
      onError: (_error, context) => errors.push(context),
    });
    await runner.start();
    try {
      await eventually(() => userFolded('bob'), { what: 'the users projection folds the batch the failing event is in' });
      const { position: later } = await user('carol');
      const watch = new ProjectionWatch(readModels, ['fragile_v1', 'users_v1'], runner, 10_000);
      await watch.waitFor(later, ['users_v1']);
      expect(await userFolded('carol')).toBe(true);

      const status = Object.fromEntries(runner.status().map((s) => [s.name, s]));
      expect(status.users_v1.state).toBe('running');
      expect(status.fragile_v1).toMatchObject({
        state: 'retrying',
        failedEvent: { position: failing, type: 'Boom', stream: 'boom-acme.b' },
        attempts: { made: 1, max: 3 },
      });
      expect(status.fragile_v1.error).toContain('malformed Boom');
      expect(errors).toEqual([{ projection: 'fragile_v1' }]);
      // It kept what it folded before the failing event, and stands just before it.
      expect(await readModels.get(physicalCollection('fragile', 1), 'boom-acme.a')).toEqual({ _id: 'boom-acme.a', n: 1 });
      const checkpoint = await readModels.getCheckpoint('fragile_v1');
      expect(checkpoint !== null && checkpoint < failing).toBe(true);
      watch.close();
    } finally {
      await runner.stop();
    }
  });

  it('retries alone, parks after its attempts keeping what it folded before the event, and writes waiting for it end at once', async () => {
    await boom('boom-acme.a');
    const { position: failing } = await boom('boom-acme.b', true);
    await boom('boom-acme.c');
    await user('ann');
    const errors: { projection?: string; parked?: boolean }[] = [];
    const runner = new ProjectorRunner(events, readModels, [fragile, usersProjection], {
      maxEventAttempts: 3,
      backoff: { initialMs: 10, maxMs: 20 },
      onError: (_error, context) => errors.push(context),
    });
    await runner.start();
    try {
      await runner.caughtUp(); // the failing projection counts once it is parked
      expect(runner.status().find((s) => s.name === 'fragile_v1')).toMatchObject({ state: 'parked', failedEvent: { position: failing } });
      expect(errors).toEqual([{ projection: 'fragile_v1' }, { projection: 'fragile_v1' }, { projection: 'fragile_v1', parked: true }]);
      expect(await readModels.find(physicalCollection('fragile', 1))).toEqual([{ _id: 'boom-acme.a', n: 1 }]);
      expect(await userFolded('ann')).toBe(true);

      const { position } = await user('bob');
      const watch = new ProjectionWatch(readModels, ['fragile_v1', 'users_v1'], runner, 600_000);
      await watch.waitFor(position, ['users_v1']);
      await expect(watch.waitFor(position, ['users_v1', 'fragile_v1'])).rejects.toMatchObject({
        reason: 'projection_lag',
        description: expect.stringMatching(/^The change was saved, but it is not yet readable: projection fragile_v1 stopped on an event/),
      });
      watch.close();
    } finally {
      await runner.stop();
    }
  });
});

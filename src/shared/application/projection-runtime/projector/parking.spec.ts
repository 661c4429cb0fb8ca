import { RecordedEvent } from '../../../domain/event';
import { SqliteReadModelStore } from '../../../../adapters/read-models/sqlite/sqlite-read-model-store';
import { openSqliteReadModels, SqliteReadModels } from '../../../../../test/support/sqlite-stores';
import { eventually } from '../../../../../test/support/waiting';
import { ParkingOptions, PROJECTOR_STATUS, ProjectionParking } from './parking';
import { ProjectionEventError } from './projection-event-error';
import { projectionSlot } from './projection-slot';

const at = (n: number) => String(n).padStart(20, '0');
const boom = (n: number): RecordedEvent => ({
  id: `e${n}`,
  streamName: 'boom-acme.b',
  revision: 0,
  position: at(n),
  type: 'Boom',
  data: {},
  metadata: { occurred_at: 't' },
  recordedAt: 't',
});
const failure = (n: number, projection = 'fragile_v1') => new ProjectionEventError(projection, boom(n), new Error('malformed Boom'));

describe('ProjectionParking over a real SQLite store', () => {
  let opened: SqliteReadModels;
  let store: SqliteReadModelStore;
  let errors: { projection: string; parked?: boolean }[];
  let parkedCalls: number;
  let due: number[];
  let parking: ProjectionParking;
  const park = (options: Partial<ParkingOptions> = {}) =>
    (parking = new ProjectionParking(store, {
      owner: 'worker-1',
      maxEventAttempts: 3,
      backoff: { initialMs: 100, maxMs: 150 },
      onError: (_error, context) => errors.push(context),
      onParked: () => parkedCalls++,
      onRetryDue: () => due.push(Date.now()),
      ...options,
    }));
  beforeEach(async () => {
    opened = openSqliteReadModels('parley-parking-');
    store = opened.readModels;
    await store.ensureCollections([{ name: PROJECTOR_STATUS }]);
    [errors, parkedCalls, due] = [[], 0, []];
  });
  afterEach(async () => {
    parking.stop();
    jest.useRealTimers();
    await opened.close();
  });

  it('lets a failing projection wait alone, and says when its retry is due, after a doubling backoff', () => {
    jest.useFakeTimers({ now: 0 });
    park();
    parking.failed(failure(5));
    expect([parking.folds('fragile_v1'), parking.folds('users_v1')]).toEqual([false, true]);
    expect(parking.retryingOne('fragile_v1')).toEqual({ error: expect.stringContaining('malformed Boom'), event: boom(5), attempts: 1, at: 100 });

    jest.advanceTimersByTime(99);
    expect(due).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(due).toEqual([100]);
    expect(parking.folds('fragile_v1')).toBe(true);

    parking.failed(failure(5));
    expect(parking.retryingOne('fragile_v1')).toMatchObject({ attempts: 2, at: 250 }); // 200 ms, capped at 150
    jest.advanceTimersByTime(150);
    expect(due).toEqual([100, 250]);
    expect(errors).toEqual([{ projection: 'fragile_v1' }, { projection: 'fragile_v1' }]);
    expect(parkedCalls).toBe(0);
  });

  it('parks a projection after its attempts at one event, and writes the note every process reads', async () => {
    park({ maxEventAttempts: 2 });
    parking.failed(failure(5));
    parking.failed(failure(5));

    expect(errors).toEqual([{ projection: 'fragile_v1' }, { projection: 'fragile_v1', parked: true }]);
    expect(parkedCalls).toBe(1);
    expect(parking.isParked('fragile_v1')).toBe(true);
    expect(parking.folds('fragile_v1')).toBe(false);
    expect(parking.retryingOne('fragile_v1')).toBeUndefined();
    expect(parking.parkedOne('fragile_v1')).toEqual({ error: expect.stringContaining('malformed Boom'), event: boom(5) });
    await eventually(async () => (await store.count(PROJECTOR_STATUS)) === 1, { what: 'the parked note is written' });
    expect(await store.find(PROJECTOR_STATUS)).toEqual([
      {
        _id: 'fragile_v1',
        state: 'parked',
        error: expect.stringContaining('malformed Boom'),
        event_position: at(5),
        event_type: 'Boom',
        event_stream: 'boom-acme.b',
        owner: 'worker-1',
        at: expect.any(String),
      },
    ]);
  });

  it('counts attempts afresh once the projection folded past the event it failed on', () => {
    park({ maxEventAttempts: 2 });
    parking.failed(failure(5));
    const slot = projectionSlot({ name: 'fragile', version: 1, collections: [], handles: [], targets: () => [], evolve: () => null }, at(4));
    parking.forgetPassed([slot]);
    parking.failed(failure(5));
    expect(parking.isParked('fragile_v1')).toBe(true);
    parking.stop();

    park({ maxEventAttempts: 2 });
    parking.failed(failure(5));
    slot.position = at(5);
    parking.forgetPassed([slot]);
    parking.failed(failure(5));
    expect(parking.isParked('fragile_v1')).toBe(false);
    expect(parking.retryingOne('fragile_v1')).toMatchObject({ attempts: 1 });
  });

  it('clears the notes of projections it takes on, but not of those it parked itself', async () => {
    park({ maxEventAttempts: 1 });
    parking.failed(failure(5, 'c_v1'));
    const note = (name: string) => ({ collection: PROJECTOR_STATUS, kind: 'put' as const, document: { _id: name, state: 'parked' }, position: at(1) });
    await store.applyBatch([note('a_v1'), note('b_v1')], {});
    await eventually(async () => (await store.count(PROJECTOR_STATUS)) === 3, { what: 'the parked notes are written' });

    await parking.clearStaleNotes(['a_v1', 'c_v1']);
    expect((await store.find(PROJECTOR_STATUS)).map((d) => d._id).sort()).toEqual(['b_v1', 'c_v1']);
  });

  it('lets go of a retry when the projection is no longer held, and schedules none once stopped', () => {
    jest.useFakeTimers({ now: 0 });
    park();
    parking.failed(failure(5));
    parking.letGo('fragile_v1');
    expect(parking.folds('fragile_v1')).toBe(true);

    parking.stop();
    parking.failed(failure(6, 'other_v1'));
    jest.advanceTimersByTime(10_000);
    expect(due).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });
});

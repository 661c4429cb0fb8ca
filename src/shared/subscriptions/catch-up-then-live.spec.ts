import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { checkpointName, physicalCollection } from '../../../projections/projection';
import { USERS, UserDocument, usersProjection } from '../../../projections/users/users.projection';
import { ProjectionWatch } from '../application/projection-runtime/projection-watch';
import { ProjectorRunner } from '../application/projection-runtime/projector-runner';
import { DomainError } from '../domain/errors';
import { LogPosition, positionAfter, RecordedEvent } from '../domain/event';
import { parseStreamName } from '../domain/streams';
import { openCatchUpThenLive } from './catch-up-then-live';
import { EndOfStream, EventChannel, WireEvent } from './event-channel';
import { LiveLog } from './live-log';
import { sleep } from '../../../test/support/waiting';

const USERS_CHECKPOINT = checkpointName(usersProjection);
/** The users collection as this version of the projection stores it. */
const USERS_STORED = physicalCollection(USERS, usersProjection.version);
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
/** Every user creation of instance acme, whatever the user's stream. */
const ACME_USERS = 'users-of:acme';
const routeUsers = (event: RecordedEvent) =>
  event.type === 'UserCreated' && parseStreamName(event.streamName)?.instanceId === 'acme' ? [ACME_USERS] : [];
const userIdOf = (event: RecordedEvent) => parseStreamName(event.streamName)!.id;

/** One process's parts, on the data directory's files: events, read models, runner, read-your-writes, live log. */
interface Process {
  readonly events: SqliteEventStore;
  readonly readModels: SqliteReadModelStore;
  readonly runner: ProjectorRunner | null;
  readonly watch: ProjectionWatch;
  readonly liveLog: LiveLog;
  stop(): Promise<void>;
}

/** What a transport would have sent: the events and the end of the stream. */
class Received {
  readonly events: WireEvent[] = [];
  readonly ends: EndOfStream[] = [];
  constructor(readonly channel: EventChannel) {
    channel.drainTo(
      (event) => this.events.push(event),
      (eos) => this.ends.push(eos),
    );
  }
  get liveIds(): string[] {
    return this.events.slice(1).map((e) => e.body as string);
  }
}

describe('openCatchUpThenLive over a real LiveLog, SQLite stores and the projector runner', () => {
  let dir: string;
  let current: Process | null = null;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-catch-up-'));
  });
  afterEach(async () => {
    await current?.stop();
    current = null;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a process on `dir`; `projectorsHere: false` is the separate deployment (workers fold, this process polls). */
  const startProcess = async ({ projectorsHere = true, timeoutMs = 5_000 } = {}): Promise<Process> => {
    const events = new SqliteEventStore(join(dir, 'events.sqlite'));
    const readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    const runner = projectorsHere ? new ProjectorRunner(events, readModels, [usersProjection], { owner: 'test' }) : null;
    if (runner) {
      await runner.start();
      await runner.caughtUp();
    }
    const watch = new ProjectionWatch(readModels, [USERS_CHECKPOINT], runner, timeoutMs);
    const liveLog = new LiveLog(events);
    liveLog.addRouter(routeUsers);
    await liveLog.start();
    current = {
      events,
      readModels,
      runner,
      watch,
      liveLog,
      async stop() {
        await liveLog.stop();
        watch.close();
        await runner?.stop();
        await events.close();
        await readModels.close();
      },
    };
    return current;
  };

  const createUser = (p: Process, id: string) =>
    p.events.append(`user-acme.${id}`, [{ type: 'UserCreated', data: { id, name: id, created_at: meta.occurred_at }, metadata: meta }], 'no_stream');

  /** Resolves once the live log has handed out `position` (events reach listeners asynchronously). */
  const dispatched = async (p: Process, position: LogPosition) => {
    while (positionAfter(position, p.liveLog.position)) await sleep(5);
  };

  /**
   * The subscription under test: every user of acme, as an initial list and then one event per
   * new user. `delivered` records each live event handed to `deliver`, before any de-duplication.
   */
  const openUsers = async (
    p: Process,
    options: {
      delivered?: RecordedEvent[];
      deliver?: (event: RecordedEvent, shown: Set<string>, push: () => void) => void | Promise<void>;
      projections?: readonly string[];
    } = {},
  ): Promise<Received> => {
    const channel = new EventChannel();
    try {
      await openCatchUpThenLive<Set<string>>({
        liveLog: p.liveLog,
        instanceId: 'acme',
        readYourWrites: p.watch,
        channel,
        service: 'test',
        keys: [ACME_USERS],
        projections: options.projections ?? [USERS_CHECKPOINT],
        readInitial: async () => {
          const docs = await p.readModels.find<UserDocument>(USERS_STORED, { where: { instance_id: 'acme' } });
          const shown = new Set(docs.map((d) => d.id));
          channel.push({ id: 'initial', body: [...shown].sort() });
          return shown;
        },
        deliver: (event, shown) => {
          options.delivered?.push(event);
          const id = userIdOf(event);
          const push = () => {
            if (shown.has(id)) return; // the initial read already showed it
            shown.add(id);
            channel.push({ id: event.position, body: id });
          };
          return options.deliver ? options.deliver(event, shown, push) : push();
        },
      });
    } catch (error) {
      channel.close(); // as the subscription routes do when opening fails
      throw error;
    }
    return new Received(channel);
  };

  const allShown = (received: Received) => [...(received.events[0].body as string[]), ...received.liveIds].sort();

  it('switches from the read model to live events without a gap or a repeat while writes go on', async () => {
    const p = await startProcess();
    const positionOf = new Map<string, LogPosition>();
    const burst = (round: number) =>
      Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const id = `u${round}-${String(i).padStart(2, '0')}`;
          positionOf.set(id, (await createUser(p, id)).position);
        }),
      );
    // Each subscription opens right after a burst (the projector may still be folding it) and
    // during the next one (its events arrive while the initial state is read).
    const subscriptions: { received: Received; delivered: RecordedEvent[] }[] = [];
    for (let round = 0; round < 6; round++) {
      await burst(2 * round);
      const delivered: RecordedEvent[] = [];
      const [received] = await Promise.all([openUsers(p, { delivered }), burst(2 * round + 1)]);
      subscriptions.push({ received, delivered });
    }
    await burst(12);
    const ids = [...positionOf.keys()].sort((a, b) => (positionOf.get(a)! < positionOf.get(b)! ? -1 : 1)); // log order
    await dispatched(p, positionOf.get(ids[ids.length - 1])!);

    for (const { received, delivered } of subscriptions) {
      expect(allShown(received)).toEqual([...ids].sort()); // nothing skipped, nothing twice
      expect(received.liveIds).toEqual(ids.slice(ids.length - received.liveIds.length)); // live events in log order
      const positions = delivered.map((e) => e.position);
      for (let i = 1; i < positions.length; i++) expect(positionAfter(positions[i], positions[i - 1])).toBe(true);
      expect(received.ends).toEqual([]);
    }
    expect(subscriptions.filter(({ received }) => (received.events[0].body as string[]).length > 0).length).toBeGreaterThan(0);
  });

  it('opens right after a restart with no write since, with projections in this process or in workers', async () => {
    let p = await startProcess();
    for (const id of ['ann', 'bob', 'cy']) await createUser(p, id);
    await p.watch.waitFor((await p.events.headPosition())!);
    await p.stop();

    p = await startProcess();
    expect((await openUsers(p)).events[0].body).toEqual(['ann', 'bob', 'cy']);
    await p.stop();

    p = await startProcess({ projectorsHere: false });
    expect((await openUsers(p)).events[0].body).toEqual(['ann', 'bob', 'cy']);
  });

  it('opens on an empty log', async () => {
    const p = await startProcess();
    expect(p.liveLog.position).toBeNull();
    const received = await openUsers(p);
    expect(received.events[0].body).toEqual([]);
    await dispatched(p, (await createUser(p, 'ann')).position);
    expect(received.liveIds).toEqual(['ann']);
  });

  it('delivers live events synchronously, inside the live log dispatch, when nothing must be read', async () => {
    const p = await startProcess();
    const received = await openUsers(p);
    const seenByLaterListener: number[] = [];
    const off = p.liveLog.on(ACME_USERS, () => seenByLaterListener.push(received.events.length));
    await dispatched(p, (await createUser(p, 'ann')).position);
    off();
    expect(seenByLaterListener).toEqual([2]); // the subscription had pushed it before the next listener ran
  });

  it('keeps log order when some deliveries must read first', async () => {
    const p = await startProcess();
    const received = await openUsers(p, {
      // Every other user is shown only once the read model holds it: a promise, later events queue behind.
      deliver: (event, _shown, push) =>
        Number(userIdOf(event).slice(1)) % 2 === 0
          ? p.watch.waitFor(event.position, [USERS_CHECKPOINT]).then(async () => {
              await p.readModels.find(USERS_STORED, { where: { instance_id: 'acme' } });
              push();
            })
          : push(),
    });
    const ids = Array.from({ length: 30 }, (_, i) => `u${String(i).padStart(2, '0')}`);
    let last: LogPosition = '';
    for (const id of ids) last = (await createUser(p, id)).position;
    await dispatched(p, last);
    await p.watch.waitFor(last);
    while (received.liveIds.length < ids.length) await sleep(5);
    expect(received.liveIds).toEqual(ids);
  });

  it('ends the stream with a 503 the SDKs retry when a delivery fails, and stops delivering', async () => {
    const p = await startProcess();
    const delivered: RecordedEvent[] = [];
    const received = await openUsers(p, {
      delivered,
      deliver: (event, _shown, push) => {
        if (userIdOf(event) === 'bad') return Promise.reject(new Error('read failed'));
        push();
      },
    });
    await createUser(p, 'ann');
    await createUser(p, 'bad');
    await dispatched(p, (await createUser(p, 'cy')).position);
    while (received.ends.length === 0) await sleep(5);
    expect(received.liveIds).toEqual(['ann']);
    expect(received.ends).toEqual([
      {
        status: 503,
        body: {
          error: 'services/test/unavailable/subscription_interrupted',
          error_description: 'The subscription was interrupted; subscribe again',
        },
      },
    ]);
    await dispatched(p, (await createUser(p, 'dee')).position);
    expect(delivered.map(userIdOf)).toEqual(['ann', 'bad']); // no longer listening
  });

  it('fails to open, truthfully and within the read-your-writes bound, when a projection does not catch up', async () => {
    const p = await startProcess({ timeoutMs: 200 });
    await dispatched(p, (await createUser(p, 'ann')).position);
    const delivered: RecordedEvent[] = [];
    const opening = openUsers(p, { delivered, projections: ['nobody_folds_this_v1'] });
    await expect(opening).rejects.toBeInstanceOf(DomainError);
    await expect(opening).rejects.toMatchObject({ status: 503, code: 'unavailable/projection_lag', description: expect.stringMatching(/^The read models are behind the log/) });
    await dispatched(p, (await createUser(p, 'bob')).position);
    expect(delivered).toEqual([]); // the closed channel took its listeners away
  });
});

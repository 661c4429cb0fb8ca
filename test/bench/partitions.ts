/**
 * The `partitions` scenario (issue 23, goal 4): how fast projector worker processes fold a
 * log into fresh read models, with 1 and then 2 workers sharing the projections split in
 * PROJECTOR_PARTITIONS partitions, on one SQLite data directory. The log (messages spread
 * over many rooms, with their reads' cursors) is written once through the event store port;
 * each run folds a copy of it from the start. Wall time to every projection's checkpoint at
 * the head, and the workers' CPU seconds per event (steadier on a shared machine).
 *
 * On SQLite every worker writes through the one read-models.sqlite write lock, so a second
 * worker adds folding CPU (targets, evolve, JSON) but not write throughput: what this
 * measures is how much of a fold is outside that lock. EventStoreDB + MongoDB have no such
 * lock (docs/scaling.md).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { openSqliteReadModels } from '../../src/infrastructure/sqlite-read-models';
import { ReadModelStore } from '../../src/shared/ports/read-model-store.port';
import { withPartitionedCheckpoints } from '../../src/shared/application/projection-runtime/partitioned-checkpoints';
import { splitProjections } from '../../src/shared/application/projection-runtime/projector/projection-parts';
import { positionMagnitude } from '../../src/shared/domain/event';
import { EventToAppend } from '../../src/shared/ports/event-store.port';
import { messagesStream } from '../../src/modules/messages/domain/message.decider';
import { roomStream } from '../../src/modules/rooms/domain/room.decider';
import { userStream } from '../../src/modules/users/domain/user.decider';
import { ALL_PROJECTIONS } from '../../projections';
import { checkpointName } from '../../projections/projection';
import { cpuSeconds } from './scale';

const ROOT = resolve(__dirname, '..', '..', '..');
const INSTANCE = 'bench-partitions';
const USERS = 50;
/** A fold that has not reached the head by then is reported as a failure, not waited for. */
const FOLD_TIMEOUT_MS = 15 * 60_000;

export interface PartitionsShape {
  readonly rooms: number;
  readonly messages: number;
  readonly partitions: number;
}

export interface FoldRun {
  readonly workers: number;
  readonly events: number;
  readonly seconds: number;
  readonly cpuSeconds: number;
}

/** Users, rooms with every user a member, and the messages dealt round the rooms with a cursor set after every tenth. */
async function fillLog(file: string, shape: PartitionsShape): Promise<number> {
  const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
  const at = new Date(Date.UTC(2020, 0, 1)).toISOString();
  const metadata = { instance_id: INSTANCE, actor: { key_id: 'bench-fill' }, occurred_at: at };
  let events = 0;
  try {
    const users = Array.from({ length: USERS }, (_, n) => `user-${n}`);
    await Promise.all(users.map((id) => store.append(userStream(INSTANCE, id), [{ type: 'UserCreated', data: { id, name: id, created_at: at }, metadata }], 'no_stream')));
    events += USERS;
    const members = users.map((user_id) => ({ user_id, user_created_at: at }));
    const rooms = Array.from({ length: shape.rooms }, (_, n) => `room-${n}`);
    for (const id of rooms) {
      await store.append(
        roomStream(INSTANCE, id),
        [
          { type: 'RoomCreated', data: { id, name: id, private: false, created_by_id: users[0], created_at: at }, metadata },
          { type: 'RoomMembersAdded', data: { members, added_at: at }, metadata },
        ],
        'no_stream',
      );
      events += 2;
    }
    const perBatch = 10_000;
    for (let from = 0; from < shape.messages; from += perBatch) {
      const appends: Promise<unknown>[] = [];
      for (let n = from; n < Math.min(shape.messages, from + perBatch); n++) {
        const room = rooms[n % shape.rooms];
        const user = users[n % USERS];
        const sent: EventToAppend = {
          type: 'MessageSent',
          data: { id: n + 1, user_id: user, parts: [{ type: 'text/plain', content: `message ${n + 1}` }], room_created_at: at, created_at: at },
          metadata,
        };
        appends.push(store.append(messagesStream(INSTANCE, room), [sent], 'any'));
        if (n % 10 === 9) {
          const cursor: EventToAppend = {
            type: 'ReadCursorSet',
            data: { room_id: room, user_id: user, position: n + 1, user_created_at: at, updated_at: at },
            metadata,
          };
          appends.push(store.append(`readcursor-${INSTANCE}.${room}.${user}`, [cursor], 'any'));
        }
      }
      await Promise.all(appends);
      events += appends.length;
    }
  } finally {
    await store.close();
  }
  return events;
}

function startWorker(dataDir: string, partitions: number): ChildProcess {
  return spawn(process.execPath, [join(ROOT, 'dist/src/main.projector.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      PROJECTOR_PARTITIONS: String(partitions),
      INSTANCE_LOCATOR: `v1:local:${INSTANCE}`,
      INSTANCE_KEY: 'k:bench-partitions-secret',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Folds a copy of the log from the start with `workers` processes; resolves when every projection stands at the head. */
async function foldWith(log: string, workers: number, shape: PartitionsShape, progress: (line: string) => void): Promise<FoldRun> {
  const dataDir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'parley-bench-partitions-'));
  copyFileSync(log, join(dataDir, 'events.sqlite'));
  const head = await (async () => {
    const store = new SqliteEventStore(join(dataDir, 'events.sqlite'));
    try {
      return (await store.headPosition())!;
    } finally {
      await store.close();
    }
  })();
  const started = performance.now();
  const children = Array.from({ length: workers }, () => startWorker(dataDir, shape.partitions));
  const cpu = new Map<number, number>();
  try {
    // The read models appear once a worker has opened them; message search's checkpoint is in search.sqlite.
    let readModels: ReadModelStore | null = null;
    for (const deadline = Date.now() + FOLD_TIMEOUT_MS; ; ) {
      for (const child of children) if (child.pid) cpu.set(child.pid, cpuSeconds(child.pid));
      if (children.some((child) => child.exitCode !== null)) throw new Error('a projector worker exited during the fold');
      if (Date.now() > deadline) throw new Error(`the fold did not reach the log's head within ${FOLD_TIMEOUT_MS / 60_000} minutes`);
      try {
        readModels ??= openSqliteReadModels(dataDir);
        const checkpoints = await withPartitionedCheckpoints(readModels, splitProjections(ALL_PROJECTIONS, shape.partitions)).getCheckpoints(
          ALL_PROJECTIONS.map(checkpointName),
        );
        if (ALL_PROJECTIONS.every((p) => checkpoints.get(checkpointName(p)) === head)) break;
      } catch {
        // Not created yet, or busy: ask again.
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    await readModels?.close();
    const events = positionMagnitude(head);
    const run = { workers, events, seconds, cpuSeconds: [...cpu.values()].reduce((a, b) => a + b, 0) };
    progress(`  measure  partitions: ${workers} worker(s) folded ${events.toLocaleString('en-US')} events in ${seconds.toFixed(1)} s`);
    return run;
  } finally {
    for (const child of children) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The scenario: one log, folded by 1 then 2 workers (each from scratch). */
export async function benchPartitions(shape: PartitionsShape, progress: (line: string) => void): Promise<FoldRun[]> {
  const dir = mkdtempSync(join(process.env.BENCH_TMPDIR ?? tmpdir(), 'parley-bench-partitions-log-'));
  try {
    const log = join(dir, 'events.sqlite');
    progress(`  fill     partitions: ${shape.messages.toLocaleString('en-US')} messages over ${shape.rooms} rooms`);
    await fillLog(log, shape);
    const runs: FoldRun[] = [];
    for (const workers of [1, 2]) runs.push(await foldWith(log, workers, shape, progress));
    return runs;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function partitionsLines(shape: PartitionsShape, runs: readonly FoldRun[]): string[] {
  const one = runs.find((r) => r.workers === 1);
  return [
    `partitions: a fold from scratch of ${shape.messages.toLocaleString('en-US')} messages over ${shape.rooms} rooms, PROJECTOR_PARTITIONS=${shape.partitions}, worker processes on one SQLite data directory`,
    ...runs.map((r) => {
      const rate = r.events / r.seconds;
      const ratio = one ? ` (${(rate / (one.events / one.seconds)).toFixed(2)}x one worker)` : '';
      return `  ${r.workers} worker(s): ${Math.round(rate).toLocaleString('en-US')} events/s${ratio}, ${((r.cpuSeconds / r.events) * 1e6).toFixed(0)} µs of worker CPU per event`;
    }),
  ];
}

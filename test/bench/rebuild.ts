/**
 * The `rebuild` scenario: a log holding a room of a million messages (appended through the
 * sealing event store, as the server would have written them: each send's actor is its user
 * and the instance key), folded twice:
 *  - incrementally, by a projector following the log live while it is written (batches of at
 *    most 500, as a serving process folds);
 *  - by `npm run rebuild` (src/cli/rebuild.ts) into fresh read models, once per build given
 *    (this one, and a baseline such as the release before the change), timed in wall clock and
 *    CPU seconds.
 * The rebuilt read models must equal the incremental build byte for byte: every row of every
 * collection (its document as stored and the position it reflects) is compared, not a sample.
 * Two floors measured in the same run say what no rebuild can beat on this machine: reading
 * the whole log through the event store (every event decoded and unsealed, nothing folded), and
 * a bare better-sqlite3 program inserting the rebuilt rows into empty tables of the same shape.
 *
 * Alone: `node dist/test/bench/rebuild.js` with BENCH_REBUILD_MESSAGES (default 1,000,000) and
 * BENCH_REBUILD_BASELINE (the root of another built worktree, e.g. /tmp/before-rebuild; none by
 * default), BENCH_REBUILD_KEEP=1 to keep the data directory, BENCH_REBUILD_PARALLEL=1 to time this
 * build's `npm run rebuild -- --parallel` too (last, and compared with the incremental build);
 * in `npm run bench` as the `rebuild` scenario.
 */
import Database from 'better-sqlite3';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../src/config/config';
import { openRuntime } from '../../src/app/runtime';
import { SqliteReadModelStore } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';
import { ProjectorRunner, PROJECTOR_STATUS } from '../../src/shared/application/projection-runtime/projector-runner';
import { EventToAppend } from '../../src/shared/ports/event-store.port';
import { positionAfter } from '../../src/shared/domain/event';
import { messageIdsStream, messagesStream } from '../../src/modules/messages/domain/message.decider';
import { roomStream } from '../../src/modules/rooms/domain/room.decider';
import { userStream } from '../../src/modules/users/domain/user.decider';
import { ALL_PROJECTIONS } from '../../projections';
import { checkpointName } from '../../projections/projection';
import { INSTANCE_ID, KEY_ID, parleyEnv } from './bench-server';

/** The goal of issue 23: a rebuild of the million-message room at this rate or more. */
export const REBUILD_GOAL_EVENTS_PER_S = 100_000;

export interface RebuildBuild {
  readonly label: string;
  /** The root of a built worktree (holding dist/src/cli/rebuild.js). */
  readonly root: string;
  /** The rebuild's command line (default: none, every projection on one thread). */
  readonly args?: readonly string[];
}

export interface RebuildRun {
  readonly label: string;
  readonly ms: number;
  readonly cpuS: number;
  /** The CPU seconds of the process's two busiest threads (the fold's main thread, and a fold thread if it has one): sampled every 100 ms. */
  readonly busiestThreadsS: readonly number[];
  /** The CLI's own summary line (events replayed, documents written per projection). */
  readonly summary: string;
  readonly readModelBytes: number;
}

export interface RebuildResult {
  readonly messages: number;
  readonly events: number;
  /** Writing the log while a projector followed it live (the incremental build). */
  readonly fillMs: number;
  readonly runs: readonly RebuildRun[];
  /** Reading every event of the log through the (sealing) event store, folding nothing. */
  readonly readLog: { readonly ms: number; readonly cpuS: number };
  /** A bare program inserting the rebuilt rows into empty tables of the same shape. */
  readonly insertFloor: { readonly ms: number; readonly cpuS: number; readonly rows: number };
  /** Rows of the rebuild (this build's) compared with the incremental build's, and the tables that differ. */
  readonly equality: { readonly rows: number; readonly tables: number; readonly differing: readonly string[] };
}

const SENDERS = 50;
const MESSAGE_BATCH = 10_000;
/** The incremental build's batches: a serving projector writes what is buffered, at most this many. */
const LIVE_BATCH = 500;

const senderId = (n: number) => `sender-${n}`;

/** Wall time and CPU of one `npm run rebuild` of `root`'s build on `dataDir`, in a process of its own. */
async function timedRebuild(build: RebuildBuild, dataDir: string): Promise<RebuildRun> {
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dataDir, `read-models.sqlite${suffix}`), { force: true });
  const cli = resolve(build.root, 'dist/src/cli/rebuild.js');
  const code = `
    const { run } = require(${JSON.stringify(cli)});
    const lines = [];
    const cpu = process.cpuUsage();
    const started = performance.now();
    run(${JSON.stringify(build.args ?? [])}, process.env, { out: (l) => lines.push(l), err: (l) => process.stderr.write(l + '\\n') }).then((status) => {
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      process.stdout.write(JSON.stringify({ status, ms, cpuS: (used.user + used.system) / 1e6, lines }) + '\\n', () => process.exit(status));
    });`;
  const child = spawn(process.execPath, ['-e', code], {
    cwd: build.root,
    env: { ...process.env, ...parleyEnv(dataDir) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  // Each thread's CPU, read while the process runs (a thread's figures go with it when it ends).
  const threads = new Map<string, number>();
  const sample = () => {
    for (const [thread, seconds] of threadSeconds(child.pid!)) threads.set(thread, Math.max(seconds, threads.get(thread) ?? 0));
  };
  const sampling = setInterval(sample, 100);
  const status = await new Promise<number | null>((done) => child.on('exit', done));
  clearInterval(sampling);
  const answer = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { status: number; ms: number; cpuS: number; lines: string[] };
  if (status !== 0 || answer.status !== 0) throw new Error(`the rebuild of ${build.label} failed (exit ${status}): ${out}`);
  return {
    label: build.label,
    ms: answer.ms,
    cpuS: answer.cpuS,
    summary: answer.lines.find((l) => l.startsWith('Replayed')) ?? '',
    busiestThreadsS: [...threads.values()].sort((a, b) => b - a).slice(0, 2),
    readModelBytes: fileBytes(join(dataDir, 'read-models.sqlite')) + fileBytes(join(dataDir, 'search.sqlite')),
  };
}

/** CPU seconds of each live thread of a process, by thread id (none once it ended). */
function threadSeconds(pid: number): Map<string, number> {
  const threads = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        threads.set(tid, (Number(fields[11]) + Number(fields[12])) / 100);
      } catch {
        // the thread ended
      }
    }
  } catch {
    // the process ended
  }
  return threads;
}

const fileBytes = (file: string): number =>
  ['', '-wal'].reduce((sum, suffix) => sum + (existsSync(file + suffix) ? statSync(file + suffix).size : 0), 0);

/** The collections' tables of a read-model file (the projector's own notes aside; a text index's FTS5 tables, which follow from its table). */
const collectionTables = (db: Database.Database, schema = 'main'): string[] => {
  const rows = db.prepare(`SELECT name, sql FROM "${schema}".sqlite_master WHERE type = 'table' AND name LIKE 'rm\\_%' ESCAPE '\\' ORDER BY name`).all() as { name: string; sql: string }[];
  const virtual = rows.filter((r) => /^CREATE VIRTUAL TABLE/i.test(r.sql)).map((r) => r.name);
  return rows
    .map((r) => r.name)
    .filter((name) => name !== `rm_${PROJECTOR_STATUS}` && !virtual.some((v) => name === v || name.startsWith(`${v}_`)));
};

/** An FTS5 index's own tables: derived from its collection's table by triggers, laid out by how the rows were batched. */
const isTextIndexTable = (name: string): boolean => /_text(_data|_idx|_config|_docsize|_content)?$/.test(name);

/**
 * Every row of every collection of `rebuilt` (with the projections kept apart, in `apart`:
 * message search's `search.sqlite`) against `incremental` (one file), and the tables that
 * differ (rows either side lacks, tables either side lacks). A text index's FTS5 tables are
 * not compared row by row (their segments depend on how the rows were batched): the rebuilt
 * index must pass FTS5's integrity check against its collection's rows instead.
 */
function compareReadModels(rebuilt: string, apart: string, incremental: string): RebuildResult['equality'] {
  const db = new Database(rebuilt, { readonly: true });
  try {
    db.prepare('ATTACH DATABASE ? AS incremental').run(incremental);
    const schemas = existsSync(apart) ? ['main', 'apart'] : ['main'];
    if (existsSync(apart)) db.prepare('ATTACH DATABASE ? AS apart').run(apart);
    const mine = new Map<string, string>();
    for (const schema of schemas) for (const t of collectionTables(db, schema)) mine.set(t, schema);
    const theirs = collectionTables(db, 'incremental');
    const differing = theirs.filter((t) => !mine.has(t)).map((t) => `${t} (only in the incremental build)`);
    let rows = 0;
    for (const [t, schema] of mine) {
      if (!theirs.includes(t)) {
        differing.push(`${t} (only in the rebuild)`);
        continue;
      }
      if (isTextIndexTable(t)) continue;
      rows += (db.prepare(`SELECT COUNT(*) AS n FROM ${schema}."${t}"`).get() as { n: number }).n;
      const missing = (db.prepare(`SELECT COUNT(*) AS n FROM (SELECT * FROM ${schema}."${t}" EXCEPT SELECT * FROM incremental."${t}")`).get() as { n: number }).n;
      const extra = (db.prepare(`SELECT COUNT(*) AS n FROM (SELECT * FROM incremental."${t}" EXCEPT SELECT * FROM ${schema}."${t}")`).get() as { n: number }).n;
      if (missing || extra) differing.push(`${t} (${missing} rows not in the incremental build, ${extra} only there)`);
    }
    db.close();
    for (const [t, schema] of mine) {
      if (!/_text$/.test(t)) continue;
      const index = new Database(schema === 'apart' ? apart : rebuilt);
      try {
        index.prepare(`INSERT INTO "${t}" ("${t}") VALUES ('integrity-check')`).run();
      } catch (error) {
        differing.push(`${t} (its FTS5 index fails the integrity check: ${(error as Error).message})`);
      } finally {
        index.close();
      }
    }
    return { rows, tables: mine.size, differing };
  } finally {
    if (db.open) db.close();
  }
}

/** The floor: the rebuilt rows, read back and inserted one by one into empty tables of the same shape, 10,000 per transaction. */
function insertFloor(rebuilt: string, dir: string): RebuildResult['insertFloor'] {
  const file = join(dir, 'floor.sqlite');
  const source = new Database(rebuilt, { readonly: true });
  const floor = new Database(file);
  try {
    floor.pragma('page_size = 8192');
    floor.pragma('journal_mode = WAL');
    floor.pragma('synchronous = NORMAL');
    const tables = collectionTables(source);
    for (const t of tables) floor.exec((source.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).get(t) as { sql: string }).sql);
    const started = performance.now();
    const cpu = process.cpuUsage();
    let rows = 0;
    for (const t of tables) {
      const read = source.prepare(`SELECT * FROM "${t}"`).raw();
      const columns = read.columns().length;
      const insert = floor.prepare(`INSERT INTO "${t}" VALUES (${Array(columns).fill('?').join(', ')})`);
      let pending: unknown[][] = [];
      const write = floor.transaction((batch: unknown[][]) => {
        for (const row of batch) insert.run(...row);
      });
      for (const row of read.iterate() as IterableIterator<unknown[]>) {
        pending.push(row);
        if (pending.length === 10_000) {
          write(pending);
          rows += pending.length;
          pending = [];
        }
      }
      write(pending);
      rows += pending.length;
    }
    return { ms: performance.now() - started, cpuS: cpuSince(cpu), rows };
  } finally {
    source.close();
    floor.close();
    rmSync(file, { force: true });
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
  }
}

/**
 * Writes the log through the server's own stores (sealed as a server seals it) while a projector
 * folds it live into `incremental.sqlite`; then times the log's read alone.
 */
async function fillAndFoldLive(
  dataDir: string,
  messages: number,
  progress: (line: string) => void,
): Promise<{ events: number; fillMs: number }> {
  const config = loadConfig({ ...parleyEnv(dataDir), LOG_LEVEL: 'warn' });
  const runtime = await openRuntime(config, 'separate');
  const incremental = new SqliteReadModelStore(join(dataDir, 'incremental.sqlite'));
  const runner = new ProjectorRunner(runtime.stores.events, incremental, ALL_PROJECTIONS, { maxBatch: LIVE_BATCH, catchUpPage: LIVE_BATCH });
  const events = runtime.stores.events;
  let count = 0;
  try {
    await runner.start();
    const started = performance.now();
    const at = new Date(Date.UTC(2020, 0, 1)).toISOString();
    const byKey = { instance_id: INSTANCE_ID, actor: { key_id: KEY_ID, su: true }, occurred_at: at };
    const bySender = (n: number) => ({ instance_id: INSTANCE_ID, actor: { user_id: senderId(n), key_id: KEY_ID }, occurred_at: at });
    for (let n = 0; n < SENDERS; n++) {
      const created: EventToAppend = { type: 'UserCreated', data: { id: senderId(n), name: `Sender ${n}`, created_at: at }, metadata: byKey };
      await events.append(userStream(INSTANCE_ID, senderId(n)), [created], 'no_stream');
      count++;
    }
    const roomId = 'long-room';
    const members = Array.from({ length: SENDERS }, (_, n) => ({ user_id: senderId(n), user_created_at: at }));
    await events.append(
      roomStream(INSTANCE_ID, roomId),
      [
        { type: 'RoomCreated', data: { id: roomId, name: roomId, private: false, created_by_id: senderId(0), created_at: at }, metadata: bySender(0) },
        { type: 'RoomMembersAdded', data: { members, added_at: at }, metadata: bySender(0) },
      ],
      'no_stream',
    );
    count += 2;
    await events.append(messageIdsStream(INSTANCE_ID), [{ type: 'MessageIdsReserved', data: { first: 1, last: messages }, metadata: byKey }], 'no_stream');
    count++;
    let revision = -1;
    for (let from = 0; from < messages; from += MESSAGE_BATCH) {
      const batch: EventToAppend[] = [];
      for (let n = from; n < Math.min(messages, from + MESSAGE_BATCH); n++) {
        const sender = n % SENDERS;
        batch.push({
          type: 'MessageSent',
          data: { id: n + 1, user_id: senderId(sender), parts: [{ type: 'text/plain', content: `message ${n + 1} of the long room` }], room_created_at: at, created_at: at },
          metadata: bySender(sender),
        });
      }
      revision = (await events.append(messagesStream(INSTANCE_ID, roomId), batch, revision < 0 ? 'no_stream' : revision)).nextExpectedRevision;
      count += batch.length;
      if (from % 200_000 === 0) progress(`  fill     rebuild: ${from.toLocaleString('en-US')} of ${messages.toLocaleString('en-US')} messages (folded live as they are written)`);
    }
    const head = await events.headPosition();
    // The incremental build has caught up once every projection's checkpoint reached the head.
    for (;;) {
      const behind = ALL_PROJECTIONS.filter((p) => positionAfter(head!, runner.positionOf(checkpointName(p))));
      if (behind.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const fillMs = performance.now() - started;
    await runner.stop();
    return { events: count, fillMs };
  } finally {
    await runner.stop().catch(() => undefined);
    await incremental.close();
    await runtime.close();
  }
}

/**
 * The floor of reading the log: every event read and unsealed through a runtime opened afresh, as
 * a rebuild's is (the writer's key ring remembers what it sealed, and opened it without deciphering).
 */
async function readLogFloor(dataDir: string, events: number): Promise<RebuildResult['readLog']> {
  const runtime = await openRuntime(loadConfig({ ...parleyEnv(dataDir), LOG_LEVEL: 'warn' }), 'separate');
  try {
    const reading = performance.now();
    const cpu = process.cpuUsage();
    let read = 0;
    for (let after: string | null = null; ; ) {
      const page = await runtime.stores.events.readAll({ after, maxCount: 10_000 });
      if (page.length === 0) break;
      read += page.length;
      after = page[page.length - 1].position;
    }
    if (read !== events) throw new Error(`read ${read} events of ${events}`);
    return { ms: performance.now() - reading, cpuS: cpuSince(cpu) };
  } finally {
    await runtime.close();
  }
}

export async function benchRebuild(options: {
  readonly tmpRoot: string;
  readonly messages: number;
  /** This build last; each other one (a baseline) before it, on the same log. */
  readonly builds: readonly RebuildBuild[];
  readonly progress: (line: string) => void;
  /** Leaves the data directory (its log, both read-model files) for profiling by hand. */
  readonly keep?: boolean;
  /** A data directory kept before: its log and incremental build are used again, not written. */
  readonly reuse?: string;
  /** How many times each build rebuilds, in turn (default 1). */
  readonly rounds?: number;
}): Promise<RebuildResult> {
  const dataDir = options.reuse ?? mkdtempSync(join(options.tmpRoot, 'parley-bench-rebuild-'));
  try {
    let filled: { events: number; fillMs: number; readLog: RebuildResult['readLog'] };
    if (options.reuse) {
      const log = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
      const events = (log.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n;
      log.close();
      filled = { events, fillMs: NaN, readLog: await readLogFloor(dataDir, events) };
    } else {
      options.progress(`  fill     rebuild: a room of ${options.messages.toLocaleString('en-US')} messages, folded live into a second read-model file`);
      const { events, fillMs } = await fillAndFoldLive(dataDir, options.messages, options.progress);
      filled = { events, fillMs, readLog: await readLogFloor(dataDir, events) };
    }
    const { events, fillMs, readLog } = filled;
    const runs: RebuildRun[] = [];
    for (let round = 0; round < (options.rounds ?? 1); round++) {
      for (const build of options.builds) {
        options.progress(`  measure  rebuild: npm run rebuild of ${build.label} (${events.toLocaleString('en-US')} events)`);
        runs.push(await timedRebuild(build, dataDir));
      }
    }
    options.progress('  measure  rebuild: every row against the incremental build, then the insert floor');
    const rebuilt = join(dataDir, 'read-models.sqlite');
    const equality = compareReadModels(rebuilt, join(dataDir, 'search.sqlite'), join(dataDir, 'incremental.sqlite'));
    const floor = insertFloor(rebuilt, dataDir);
    return { messages: options.messages, events, fillMs, runs, readLog, insertFloor: floor, equality };
  } finally {
    if (options.keep || options.reuse) options.progress(`  kept     rebuild: the data directory ${dataDir} (BENCH_REBUILD_KEEP)`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

const cpuSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
};

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export function rebuildLines(r: RebuildResult): string[] {
  const rate = (ms: number) => r.events / (ms / 1000);
  const lines = [
    Number.isNaN(r.fillMs)
      ? `rebuild: a kept log of ${fmt(r.events)} events and its incremental build`
      : `rebuild: a room of ${fmt(r.messages)} messages (${fmt(r.events)} events), written in ${(r.fillMs / 1000).toFixed(1)} s while a projector folded it live (the incremental build)`,
  ];
  for (const run of r.runs) {
    lines.push(
      `  npm run rebuild, ${run.label}: ${(run.ms / 1000).toFixed(1)} s = ${fmt(rate(run.ms))} events/s; ` +
        `CPU ${run.cpuS.toFixed(1)} s = ${fmt(r.events / run.cpuS)} events per CPU-second (busiest threads ${run.busiestThreadsS.map((x) => x.toFixed(1)).join(' and ')} s); read models ${(run.readModelBytes / 1e6).toFixed(0)} MB`,
    );
    if (run.summary) lines.push(`    ${run.summary}`);
  }
  const mine = r.runs[r.runs.length - 1];
  // Each build's best round: on a shared machine the others mostly measure what else ran.
  const best = new Map<string, RebuildRun>();
  for (const run of r.runs) if (!best.has(run.label) || run.ms < best.get(run.label)!.ms) best.set(run.label, run);
  const mineBest = best.get(mine.label)!;
  for (const [label, base] of best) {
    if (label === mine.label) continue;
    const cpu = (runs: RebuildRun[]) => Math.min(...runs.map((x) => x.cpuS));
    const baseCpu = cpu(r.runs.filter((x) => x.label === label));
    const mineCpu = cpu(r.runs.filter((x) => x.label === mine.label));
    lines.push(`  ${mine.label} against ${label}, best rounds: ${(base.ms / mineBest.ms).toFixed(2)}× the rate, ${(baseCpu / mineCpu).toFixed(2)}× less CPU per event`);
  }
  if (!Number.isNaN(r.readLog.ms)) {
    lines.push(
      `  floor: reading the log alone (decoded, unsealed, nothing folded): ${(r.readLog.ms / 1000).toFixed(1)} s = ${fmt(rate(r.readLog.ms))} events/s; ` +
        `CPU ${r.readLog.cpuS.toFixed(1)} s = ${fmt(r.events / r.readLog.cpuS)} events per CPU-second`,
    );
  }
  lines.push(
    `  floor: a bare program inserting the ${fmt(r.insertFloor.rows)} rebuilt rows into empty tables: ${(r.insertFloor.ms / 1000).toFixed(1)} s = ${fmt(rate(r.insertFloor.ms))} events/s; ` +
      `CPU ${r.insertFloor.cpuS.toFixed(1)} s = ${fmt(r.events / r.insertFloor.cpuS)} events per CPU-second`,
  );
  lines.push(
    r.equality.differing.length === 0
      ? `  the rebuild equals the incremental build: ${fmt(r.equality.rows)} rows of ${r.equality.tables} collections compared byte for byte`
      : `  FAIL: the rebuild differs from the incremental build: ${r.equality.differing.join('; ')}`,
  );
  if (mine) lines.push(`  GOAL: rebuild >= ${fmt(REBUILD_GOAL_EVENTS_PER_S)} events/s — ${rate(mine.ms) >= REBUILD_GOAL_EVENTS_PER_S ? 'MET' : 'NOT MET'}`);
  return lines;
}

/** The baseline build to compare with, if any (BENCH_REBUILD_BASELINE: the root of a built worktree). */
export function rebuildBuilds(env: NodeJS.ProcessEnv): RebuildBuild[] {
  const here = resolve(__dirname, '../../..');
  const baseline = env.BENCH_REBUILD_BASELINE;
  const builds: RebuildBuild[] = [];
  if (baseline) builds.push({ label: `baseline (${gitHead(baseline)})`, root: resolve(baseline) });
  builds.push({ label: `this build (${gitHead(here)})`, root: here });
  if (env.BENCH_REBUILD_PARALLEL === '1') builds.push({ label: `this build --parallel (${gitHead(here)})`, root: here, args: ['--parallel'] });
  return builds;
}

function gitHead(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return root;
  }
}

if (require.main === module) {
  const messages = Number(process.env.BENCH_REBUILD_MESSAGES ?? 1_000_000);
  benchRebuild({
    tmpRoot: process.env.BENCH_TMPDIR || os.tmpdir(),
    messages,
    builds: rebuildBuilds(process.env),
    progress: (line) => process.stderr.write(`${line}\n`),
    keep: process.env.BENCH_REBUILD_KEEP === '1',
    reuse: process.env.BENCH_REBUILD_DATA_DIR || undefined,
    rounds: Number(process.env.BENCH_REBUILD_ROUNDS ?? 1),
  }).then(
    (result) => {
      process.stderr.write(`load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
      for (const line of rebuildLines(result)) console.log(line);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}

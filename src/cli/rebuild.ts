import { SingleBar } from 'cli-progress';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { openRuntime, Runtime } from '../app/runtime';
import { ProjectorRunner } from '../shared/application/projection-runtime/projector-runner';
import { everyLayoutCheckpoint, splitProjections } from '../shared/application/projection-runtime/projector/projection-parts';
import { LogPosition, positionMagnitude } from '../shared/domain/event';
import { ALL_PROJECTIONS } from '../../projections';
import { checkpointName, physicalCollection, ProjectionDefinition } from '../../projections/projection';
import { FoldThread } from '../app/fold-thread/fold-thread';
import { CliIo, cliConfig, EXIT_FAILED, EXIT_OK, parseCommandLine, reportFailure, runAsMain, UsageError } from './cli-io';

const names = [...new Set(ALL_PROJECTIONS.map((p) => p.name))];

/** A projection as the rebuild reports it: by name, with its version while several versions are listed (an upgrade in progress). */
export const rebuildLabel = (p: ProjectionDefinition): string =>
  ALL_PROJECTIONS.filter((q) => q.name === p.name).length > 1 ? checkpointName(p) : p.name;

export const REBUILD_USAGE = `Usage: npm run rebuild [-- [--parallel] <projection>...]

Replays the event log into fresh read models: the chosen projections' collections and
checkpoints are dropped, then the log is folded into them again from its start.

Projections: ${names.join(', ')} (default: all)

--parallel (embedded default only): message search, which has a file of its own
(search.sqlite), folds on a second thread beside the others. Both threads read and unseal the
whole log: about 1.3 times the CPU, for a shorter rebuild where a second core is free.

Stop the server and the projector workers first: the rebuild refuses to run while another
process holds a projection's lease. Stores come from DATA_DIR, or EVENTSTORE_CONNECTION_STRING
and MONGODB_URI, as for the server.`;

/** How long the rebuild's leases last without renewal (the runners renew them every third of it, within a page too). */
const LEASE_TTL_MS = 15_000;

/** What a rebuild's command line asks for; null for the usage. */
export function parseRebuild(argv: readonly string[]): { projections: readonly ProjectionDefinition[]; parallel: boolean } | null {
  const parsed = parseCommandLine({
    args: [...argv],
    options: { help: { type: 'boolean', short: 'h' }, parallel: { type: 'boolean' } },
    allowPositionals: true,
  });
  if (parsed.values.help || parsed.positionals[0] === 'help') return null;
  const unknown = parsed.positionals.filter((n) => !names.includes(n));
  if (unknown.length) throw new UsageError(`unknown projection ${unknown.map((n) => `"${n}"`).join(', ')}`);
  const projections = parsed.positionals.length === 0 ? ALL_PROJECTIONS : ALL_PROJECTIONS.filter((p) => parsed.positionals.includes(p.name));
  return { projections, parallel: parsed.values.parallel === true };
}

export const chooseProjections = (argv: readonly string[]): readonly ProjectionDefinition[] | null => parseRebuild(argv)?.projections ?? null;

interface Progress {
  update(position: LogPosition): void;
  /** Shows the end (complete) or just leaves the last state (failed); later updates are ignored. */
  stop(complete: boolean): void;
}

/** A bar on a terminal; otherwise a plain line at most once a second and at the end. */
function progressReporter(io: CliIo, total: number): Progress {
  if (io.tty) {
    const bar = new SingleBar({
      stream: io.tty,
      format: 'rebuild [{bar}] {percentage}% | log position {value}/{total} | {duration_formatted}',
      hideCursor: true,
    });
    bar.start(total, 0);
    let stopped = false;
    return {
      update: (position) => {
        if (!stopped) bar.update(Math.min(positionMagnitude(position), total));
      },
      stop: (complete) => {
        if (stopped) return;
        stopped = true;
        if (complete) bar.update(total);
        bar.stop();
      },
    };
  }
  let printedAt = 0;
  let last = -1;
  let stopped = false;
  const print = (value: number) => {
    if (value === last) return;
    last = value;
    printedAt = Date.now();
    const percent = total > 0 ? Math.floor((value / total) * 100) : 100;
    io.out(`rebuild: log position ${value}/${total} (${percent}%)`);
  };
  return {
    update(position) {
      if (stopped) return;
      const value = Math.min(positionMagnitude(position), total);
      if (value >= total || Date.now() - printedAt >= 1000) print(value);
    },
    stop: (complete) => {
      if (!stopped && complete) print(total);
      stopped = true;
    },
  };
}

/**
 * The chosen projections split by where a `--parallel` rebuild folds them: on the embedded
 * default (SQLite), each group kept in a file of its own (`ProjectionDefinition.background`:
 * message search) on a thread of its own, in parallel with the rest here (independent files,
 * independent write locks: a rebuild of the bench's 100,053-event log spent about half its CPU on
 * message search); with EventStoreDB or MongoDB, all here.
 */
export function foldsOf(
  chosen: readonly ProjectionDefinition[],
  config: { readonly eventStoreConnectionString?: string; readonly mongodbUri?: string },
): { here: ProjectionDefinition[]; apart: ProjectionDefinition[][] } {
  if (config.eventStoreConnectionString || config.mongodbUri) return { here: [...chosen], apart: [] };
  const byFile = new Map<string, ProjectionDefinition[]>();
  const here: ProjectionDefinition[] = [];
  for (const p of chosen) {
    const file = p.background?.sqliteFile;
    if (file) byFile.set(file, [...(byFile.get(file) ?? []), p]);
    else here.push(p);
  }
  // Only these chosen: folded here as well as on a thread.
  if (here.length === 0) return { here: [...chosen], apart: [] };
  return { here, apart: [...byFile.values()] };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The rebuild CLI: takes the chosen projections' leases (refusing while a live process holds
 * one), drops their read models and checkpoints, folds the log into them up to the head read
 * at the start, and reports what it replayed.
 */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let runtime: Runtime | undefined;
  let runner: ProjectorRunner | undefined;
  let progress: Progress | undefined;
  const owner = `rebuild-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  let checkpoints: string[] = [];
  /** The leases the rebuild holds: each projection's, and its partitions' under PROJECTOR_PARTITIONS (workers may hold those). */
  let leased: string[] = [];
  const threads: FoldThread[] = [];
  try {
    const asked = parseRebuild(argv);
    if (!asked) {
      io.out(REBUILD_USAGE);
      return EXIT_OK;
    }
    const chosen = asked.projections;
    checkpoints = chosen.map(checkpointName);
    // 'separate': no projector of our own starts until the leases are ours and the models reset.
    runtime = await openRuntime(cliConfig(env), 'separate');
    const { events, readModels } = runtime.stores;

    const split = splitProjections(chosen, runtime.config.projectorPartitions);
    leased = checkpoints.flatMap((checkpoint) => [checkpoint, ...(split.get(checkpoint) ?? [])]);
    const busy: string[] = [];
    for (const checkpoint of leased) {
      if (!(await readModels.acquireLease(checkpoint, owner, LEASE_TTL_MS))) busy.push(checkpoint);
    }
    if (busy.length) {
      io.err(
        `error: another Parley process is running the projection${busy.length > 1 ? 's' : ''} ${busy.join(', ')}.\n` +
          'Stop the server and any projector workers (npm start, start:api, start:projector), then run the rebuild again.\n' +
          `A process that stopped without releasing its lease frees it within ${LEASE_TTL_MS / 1000} s.`,
      );
      return EXIT_FAILED;
    }

    const head = await events.headPosition();
    const total = positionMagnitude(head);
    io.out(`Rebuilding ${chosen.map(rebuildLabel).join(', ')} from the log (${runtime.stores.description})`);
    // The partitions' checkpoints of every partition count go too: workers resume from the rebuilt one.
    await readModels.reset(
      chosen.flatMap((p) => p.collections.map((c) => physicalCollection(c.name, p.version))),
      checkpoints.flatMap(everyLayoutCheckpoint),
    );

    let fail: (error: unknown) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    failed.catch(() => undefined);
    const started = Date.now();
    progress = progressReporter(io, total);
    const bar = progress;
    const { here, apart } = asked.parallel ? foldsOf(chosen, runtime.config) : { here: [...chosen], apart: [] };
    const folds = ['here', ...apart.map((_, i) => `apart-${i}`)];
    // Each fold reports where it stands; the bar shows the least advanced.
    const standing = new Map<string, LogPosition>();
    const moved = (fold: string, position: LogPosition) => {
      standing.set(fold, position);
      let least = position;
      for (const at of standing.values()) if (at < least) least = at;
      if (standing.size === folds.length) bar.update(least);
    };
    // The projections kept in a file of their own fold on threads of their own (the second core), each through its own connections.
    for (const [i, group] of apart.entries()) {
      io.out(`${group.map(rebuildLabel).join(', ')} fold${group.length === 1 ? 's' : ''} on a thread of ${group.length === 1 ? 'its' : 'their'} own (${group[0].background!.sqliteFile}.sqlite)`);
      const thread = new FoldThread({
        config: runtime.config,
        owner,
        leaseTtlMs: LEASE_TTL_MS,
        checkpoints: group.map(checkpointName),
        onProgress: (position) => moved(`apart-${i}`, position),
      });
      threads.push(thread);
      thread.done.catch(fail);
      // Started before the fold here writes: the thread's start writes to the main file (its status notes), afterwards only to its own.
      await Promise.race([thread.started, failed]);
    }
    runner = new ProjectorRunner(events, readModels, here, {
      owner,
      leaseTtlMs: LEASE_TTL_MS,
      // It holds the leases it rebuilds: it shares none out to workers running other projections.
      shareOut: false,
      // A WAL not emptied after a destroying page is emptied when the server next opens the read models.
      onError: (error, { freedSpace }) => (freedSpace ? undefined : fail(error)),
      onProgress: (position) => moved('here', position),
    });
    await runner.start();
    if (runner.running.length !== here.length) throw new Error('lost a projection lease while starting the rebuild');
    await Promise.race([runner.caughtUp(), failed]);
    const threadStats = await Promise.race([Promise.all(threads.map((thread) => thread.done)), failed]);
    progress.stop(true);

    const stats = runner.stats();
    const counts = Object.assign({}, stats.projections, ...threadStats.map((s) => s.projections));
    const eventsRead = Math.max(stats.eventsRead, ...threadStats.map((s) => s.eventsRead));
    const perProjection = chosen.map((p) => {
      const s = counts[checkpointName(p)] ?? { events: 0, documents: 0 };
      return `${rebuildLabel(p)}: ${plural(s.events, 'event')}, ${plural(s.documents, 'document')} written`;
    });
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    io.out(`Replayed ${plural(eventsRead, 'event')} in ${seconds} s (${perProjection.join('; ')})`);
    return EXIT_OK;
  } catch (error) {
    progress?.stop(false);
    return reportFailure(error, io, REBUILD_USAGE);
  } finally {
    await runner?.stop().catch(() => undefined);
    await Promise.all(threads.map((thread) => thread.stop()));
    if (runtime) {
      for (const checkpoint of leased) await runtime.stores.readModels.releaseLease(checkpoint, owner).catch(() => undefined);
      await runtime.close().catch(() => undefined);
    }
  }
}

if (require.main === module) runAsMain(run);

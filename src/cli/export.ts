import { resolve } from 'node:path';
import { openRuntime, Runtime } from '../app/runtime';
import { ExportProgress, ExportTargetError, InstanceExporter } from '../shared/application/operations/instance-transfer/export-instance';
import { INSTANCE_ID_PATTERN } from '../shared/domain/streams';
import { instanceStream } from '../modules/instances/domain/instance.decider';
import { CliIo, cliConfig, EXIT_FAILED, EXIT_OK, parseCommandLine, reportFailure, runAsMain, UsageError } from './cli-io';

export const EXPORT_USAGE = `Usage: npm run export -- <instance> [--out DIR] [--follow]

Writes the instance's events, in log order, to DIR/events.ndjson (one event a line: stream,
revision, id, type, data, metadata, recorded_at, position) and its attachments' bytes to
DIR/blobs/ (listed in DIR/blobs.ndjson), with DIR/manifest.json. DIR defaults to
./parley-export-<instance>-<time> and must not hold an export already.

--follow keeps tailing the live log after the copy, writing each new event of the instance as it
arrives, until SIGINT or SIGTERM (Ctrl-C); the server may run meanwhile.

Key secrets stay sealed with the master key: keep MASTER_KEY (or DATA_DIR/master.key) for the
import. Stores come from DATA_DIR, or EVENTSTORE_CONNECTION_STRING and MONGODB_URI, as for the server.`;

interface ExportArgs {
  readonly instanceId: string;
  readonly out: string;
  readonly follow: boolean;
}

export function parse(argv: readonly string[]): ExportArgs | null {
  const parsed = parseCommandLine({
    args: [...argv],
    options: { out: { type: 'string', short: 'o' }, follow: { type: 'boolean', short: 'f' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  const { positionals: p, values } = parsed;
  if (values.help || (p.length === 1 && p[0] === 'help')) return null;
  if (p.length !== 1) throw new UsageError(p.length === 0 ? 'say which instance to export' : 'export one instance at a time');
  const instanceId = p[0];
  if (!INSTANCE_ID_PATTERN.test(instanceId)) throw new UsageError(`"${instanceId}" is not an instance id`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return { instanceId, out: resolve(values.out ?? `parley-export-${instanceId}-${stamp}`), follow: values.follow === true };
}

const describe = (p: ExportProgress) => `${p.events} event${p.events === 1 ? '' : 's'} and ${p.blobs} blob${p.blobs === 1 ? '' : 's'}`;

/** The export CLI: copies the instance to the directory, then (--follow) tails the log until a signal. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let runtime: Runtime | undefined;
  let exporter: InstanceExporter | undefined;
  let complete = false;
  const stopOnSignal = () => void exporter?.stop();
  try {
    const args = parse(argv);
    if (!args) {
      io.out(EXPORT_USAGE);
      return EXIT_OK;
    }
    runtime = await openRuntime(cliConfig(env), 'separate');
    const { events, blobs, description } = runtime.stores;
    if ((await events.readStream(instanceStream(args.instanceId), { maxCount: 1 })).length === 0) {
      io.err(`error: the event log holds no instance "${args.instanceId}"`);
      return EXIT_FAILED;
    }
    exporter = new InstanceExporter(events, blobs, args.instanceId, args.out, description, (m) => io.err(`warning: ${m}`));
    exporter.open();
    process.once('SIGINT', stopOnSignal);
    process.once('SIGTERM', stopOnSignal);
    const copied = await exporter.exportToHead();
    if (!copied.reachedHead) {
      io.err(`error: interrupted: ${args.out} holds ${describe(copied)}, the log up to position ${copied.lastPosition ?? 'none'} only`);
      return EXIT_FAILED;
    }
    if (args.follow) {
      io.out(`Exported ${describe(copied)} of instance "${args.instanceId}" to ${args.out}; following the live log (stop with Ctrl-C)`);
      const followed = await exporter.follow();
      complete = true;
      io.out(`Stopped following: exported ${describe(followed)} of instance "${args.instanceId}" to ${args.out}`);
    } else {
      complete = true;
      io.out(`Exported ${describe(copied)} of instance "${args.instanceId}" to ${args.out}`);
    }
    return EXIT_OK;
  } catch (error) {
    if (error instanceof ExportTargetError) {
      io.err(`error: ${error.message}`);
      return EXIT_FAILED;
    }
    return reportFailure(error, io, EXPORT_USAGE);
  } finally {
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
    try {
      exporter?.close(complete);
    } finally {
      await runtime?.close().catch(() => undefined);
    }
  }
}

if (require.main === module) runAsMain(run);

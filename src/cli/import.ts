import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openRuntime, Runtime } from '../app/runtime';
import {
  checkExport,
  ImportConflictError,
  importInstance,
  importRefusal,
  ImportResult,
  ImportSourceError,
} from '../shared/application/operations/instance-transfer/import-instance';
import { CliIo, cliConfig, EXIT_FAILED, EXIT_OK, parseCommandLine, reportFailure, runAsMain, UsageError } from './cli-io';

export const IMPORT_USAGE = `Usage: npm run import -- <DIR> [--instance <id>]

Loads an instance export (npm run export) into the stores of DATA_DIR, or of
EVENTSTORE_CONNECTION_STRING and MONGODB_URI, as for the server: blobs first, then the events
in their order, with their ids, data, metadata and recorded times. Idempotent: what the target
already holds from this export, or from an earlier or later export of the same instance, is
skipped, so a second import changes nothing, an interrupted one can be run again, and a later
export imported over an earlier one appends only what is new (a cut-over: the target must take
no writes before its last import; where it did, the import stops and says so). The read models
catch up by the projectors: start the server (npm start) or the projector workers
(npm run start:projector), or run npm run rebuild.

--instance <id>: refuse unless the export is of this instance (an export is imported under its
own instance id: ids appear in tokens, event data and blob keys, so there is no renaming).

The export's key secrets are sealed with the source's master key and are imported as they
are: the target must use the same master key (MASTER_KEY, or the source's master.key copied
into DATA_DIR). Otherwise the import stops before writing anything.`;

export function parse(argv: readonly string[]): { dir: string; instanceId?: string } | null {
  const parsed = parseCommandLine({
    args: [...argv],
    options: { instance: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
  });
  const { positionals: p, values } = parsed;
  if (values.help || (p.length === 1 && p[0] === 'help')) return null;
  if (p.length !== 1) throw new UsageError(p.length === 0 ? 'say which export directory to import' : 'import one directory at a time');
  return { dir: resolve(p[0]), instanceId: values.instance };
}

const summary = (r: ImportResult) =>
  `${r.eventsAppended} event${r.eventsAppended === 1 ? '' : 's'} appended (${r.eventsPresent} already there), ` +
  `${r.blobsCopied} blob${r.blobsCopied === 1 ? '' : 's'} copied (${r.blobsPresent} already there)`;

/** The import CLI: checks the whole export and the master key, then loads it. */
export async function run(argv: readonly string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  let runtime: Runtime | undefined;
  let done: ImportResult | null = null;
  try {
    const args = parse(argv);
    if (!args) {
      io.out(IMPORT_USAGE);
      return EXIT_OK;
    }
    const checked = await checkExport(args.dir);
    const instanceId = checked.manifest.instance_id;
    const otherInstance = importRefusal(checked, { instanceId: args.instanceId, opens: () => true });
    if (otherInstance) {
      io.err(`error: ${otherInstance.message.replace('the archive', args.dir)}; nothing was written`);
      return EXIT_FAILED;
    }
    const config = cliConfig(env);
    // Opening the stores would create a fresh master key beside an empty log: say what is needed instead.
    if (checked.sealed && !config.masterKey && !existsSync(join(config.dataDir, 'master.key'))) {
      io.err(
        `error: the export holds key secrets sealed with the source's master key, and the target has none: ` +
          `set MASTER_KEY to it, or copy the source's master.key into ${config.dataDir}. Nothing was written.`,
      );
      return EXIT_FAILED;
    }
    runtime = await openRuntime(config, 'separate');
    const otherKey = importRefusal(checked, { opens: (sealed) => runtime!.secretBox.opens(sealed) });
    if (otherKey) {
      io.err(`error: ${otherKey.message}. Nothing was written.`);
      return EXIT_FAILED;
    }
    if (!checked.manifest.complete) {
      io.err(`warning: the export is not complete (still following, or stopped before its end): importing its ${checked.events} events`);
    }
    const result = await importInstance(args.dir, checked, runtime.stores.events, runtime.stores.blobs, (r) => (done = r));
    done = result;
    io.out(`Imported instance "${instanceId}" into ${runtime.stores.description}: ${summary(result)}.`);
    if (result.eventsAppended > 0) {
      io.out('The read models catch up when the server or the projector workers run (or run npm run rebuild).');
    }
    return EXIT_OK;
  } catch (error) {
    if (error instanceof ImportSourceError || error instanceof ImportConflictError) {
      io.err(`error: ${error.message}`);
      const partial = done as ImportResult | null;
      io.err(
        partial && (partial.eventsAppended > 0 || partial.blobsCopied > 0)
          ? `Before it: ${summary(partial)}; running the import again skips them.`
          : 'Nothing was written.',
      );
      return EXIT_FAILED;
    }
    return reportFailure(error, io, IMPORT_USAGE);
  } finally {
    await runtime?.close().catch(() => undefined);
  }
}

if (require.main === module) runAsMain(run);

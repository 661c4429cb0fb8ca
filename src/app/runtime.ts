import { checkpointsHostedElsewhere } from '../adapters/shared/sqlite-wal-checkpointer';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ParleyConfig } from '../config/config';
import { SecretBox } from '../shared/crypto/secret-box';
import { makePrivateDir } from '../shared/files/private-files';
import { openMasterKey } from '../shared/crypto/master-key';
import { PROJECTOR_STATUS } from '../shared/application/projection-runtime/projector-runner';
import type { Projectors } from '../shared/application/projection-runtime/process-projectors';
import { ProjectionWatch } from '../shared/application/projection-runtime/projection-watch';
import { ProjectionVersions } from '../shared/application/projection-runtime/projection-versions';
import { ObservedEventStore, StorageHealth } from '../shared/application/operations/storage-health';
import { openStores, Stores } from '../infrastructure/stores';
import { DataKeyRing } from '../shared/crypto/data-key-ring';
import { SealingEventStore } from '../shared/application/operations/sealing-event-store';
import { personalDataRulesFor } from './personal-data-rules';
import { ShredSweep } from '../shared/application/operations/shred-sweep';
import { PeriodicSweep } from '../shared/application/operations/periodic-sweep';
import { createLogger, Logger } from '../infrastructure/logger';
import { explainDataDirFailure } from '../infrastructure/data-dir-space';
import { DataDirLock } from '../infrastructure/data-dir-lock';
import { ALL_PROJECTIONS } from '../../projections';
import { physicalCollectionSpecs, ProjectionDefinition } from '../../projections/projection';
import { SqliteEventStore } from '../adapters/event-store/sqlite/sqlite-event-store';
import { openProjectors } from './projectors';
import { ProjectorThread } from './projector-thread/projector-thread';
import { projectorThreadConfig } from './projector-thread/protocol';
import { withPartitionedCheckpoints } from '../shared/application/projection-runtime/partitioned-checkpoints';
import { recordProjectorBatch } from '../shared/observability/metrics';
import { splitProjections } from '../shared/application/projection-runtime/projector/projection-parts';

/** How often a process that folds projections sweeps the log's deletes for keys a crash left undestroyed. */
/**
 * How often the shred sweep runs: the bound on how long a delivered Beams publish's notification
 * stays in the log readable (its key is destroyed by the sweep, see ShredSweep), and on how long
 * a delete whose destroy failed keeps its content (docs/privacy.md states both).
 */
export const SHRED_SWEEP_INTERVAL_MS = 2_000;

/**
 * Where projections run relative to this process:
 * - `embedded`: the default server; it owns DATA_DIR (a lock) and folds every projection
 *   itself, taking over its own dead predecessor's leases at once;
 * - `in-process`: folds the projections whose leases it can take (projector workers, the admin CLI);
 * - `separate`: folds nothing (API processes beside workers, read-only CLIs).
 */
export type ProjectorMode = 'embedded' | 'in-process' | 'separate';

/** Everything a Parley process holds outside Nest's container: stores, master key, projectors. */
export interface Runtime {
  readonly config: ParleyConfig;
  readonly mode: ProjectorMode;
  readonly logger: Logger;
  readonly stores: Stores;
  readonly secretBox: SecretBox;
  /** The projectors this process runs (embedded: here or on its projector thread; in-process), none for `separate`. */
  readonly runner: Projectors | null;
  /** Read-your-writes and projection positions for this process. */
  readonly projections: ProjectionWatch;
  /** Which version of each projection serves reads. */
  readonly versions: ProjectionVersions;
  readonly storage: StorageHealth;
  /** Who this process is when it takes a lease: stable per host and directory for the embedded server (see LEASE_OWNER). */
  readonly leaseOwner: string;
  close(): Promise<void>;
}

/**
 * `beforeCatchUp` runs once the stores are open (and DATA_DIR locked), before the projectors fold
 * what they missed. `projections` are the ones this release lists (projections/index.ts); a
 * test starts a release that lists more (a bumped version) through it.
 */
export async function openRuntime(
  config: ParleyConfig,
  mode: ProjectorMode,
  hooks: {
    beforeCatchUp?: () => Promise<void>;
    /** Tests: the projector thread may be made to fail on demand (`ProjectorThread.crashForTest`). */
    projectorThreadTestHooks?: boolean;
  } = {},
  projections: readonly ProjectionDefinition[] = ALL_PROJECTIONS,
): Promise<Runtime> {
  const logger = createLogger(config.logLevel);
  const lock = mode === 'embedded' && needsDataDir(config) ? lockDataDir(config.dataDir) : null;
  // The embedded server on SQLite folds on a thread of its own (PROJECTOR_THREAD), which opens
  // its own connections to DATA_DIR's files and hosts the process's WAL checkpoints: named
  // before the stores open, so that none starts a thread for checkpoints alone.
  const foldsOnThread = mode === 'embedded' && config.projectorThread && !config.eventStoreConnectionString && !config.mongodbUri;
  const checkpoints = foldsOnThread ? checkpointsHostedElsewhere() : undefined;
  let opened: Stores;
  try {
    opened = await openStores(config);
  } catch (error) {
    lock?.release();
    throw needsDataDir(config) ? explainDataDirFailure(config.dataDir, error) : error;
  }
  const storage = new StorageHealth();
  const observed = new ObservedEventStore(opened.events, storage);
  // Locked, the embedded server alone destroys the keys in DATA_DIR/keys.sqlite (a CLI beside it only destroys again what the server already forgot).
  const secretBox = await openMasterKey(config, observed);
  const rules = personalDataRulesFor(config);
  const ring = new DataKeyRing(opened.dataKeys, secretBox, { ...config.dataKeyCache, exclusive: lock !== null && !config.mongodbUri });
  const sealing = new SealingEventStore(observed, ring, rules, (error, selectors) =>
    logger.error({ err: error, data_keys: selectors.length }, 'a delete is stored but its data keys could not be destroyed yet; the next sweep destroys them'),
  );
  // Readers see a split projection (PROJECTOR_PARTITIONS) as one: its least advanced partition.
  const readModels = withPartitionedCheckpoints(opened.readModels, splitProjections(projections, config.projectorPartitions));
  const stores: Stores = { ...opened, events: sealing, readModels };
  // The embedded server is alone on its data directory (the lock), so a stable owner
  // lets a restart renew the leases its killed predecessor still held.
  const leaseOwner = mode === 'embedded' ? `embedded@${hostname()}:${config.dataDir}` : `${hostname()}:${process.pid}:${randomUUID()}`;
  let runner: Projectors | null = null;
  let shredSweep: PeriodicSweep | null = null;
  if (mode !== 'separate') {
    const log = opened.events;
    // Any other process folds on its one thread.
    runner =
      foldsOnThread && log instanceof SqliteEventStore
        ? new ProjectorThread(
            { config: projectorThreadConfig(config), leaseOwner, projections: projections.map(({ name, version }) => ({ name, version })), testHooks: hooks.projectorThreadTestHooks ?? false, checkpoints },
            log,
            ring,
            logger,
          )
        : await openProjectors(stores.events, readModels, { config, owner: mode === 'embedded' ? leaseOwner : undefined, logger, projections, recordBatch: recordProjectorBatch });
  }
  // Positions come from the watch, which needs the versions to resolve waits: tie the knot lazily.
  let watch: ProjectionWatch | null = null;
  const versions = new ProjectionVersions(projections, (checkpoint) => watch!.positionOf(checkpoint));
  watch = new ProjectionWatch(stores.readModels, versions.checkpoints, runner, config.readYourWritesTimeoutMs, 10, versions);
  if (runner) {
    await refuseForeignCheckpoints(stores, versions.checkpoints);
    await hooks.beforeCatchUp?.();
    await runner.start();
    const sweep = new ShredSweep(sealing, stores.readModels);
    await sweep.pass(); // before serving: what a crash left undestroyed is never served
    shredSweep = new PeriodicSweep(() => sweep.pass().then(() => undefined), SHRED_SWEEP_INTERVAL_MS, (error) =>
      logger.error({ err: error }, 'the sweep of deleted content failed; it tries again shortly'),
    );
    shredSweep.start();
  } else {
    // Queries of an API process may run before any projector worker has created the collections.
    await stores.readModels.ensureCollections([...projections.flatMap(physicalCollectionSpecs), { name: PROJECTOR_STATUS }]);
  }
  await watch.refresh(); // which version serves is decided on known positions, never on none
  logger.info(`Parley stores: ${stores.description}`);
  return {
    config,
    mode,
    logger,
    stores,
    secretBox,
    runner,
    projections: watch,
    versions,
    storage,
    leaseOwner,
    async close() {
      watch.close();
      await shredSweep?.stop();
      await runner?.stop();
      await stores.ephemeral.close();
      await stores.events.close();
      await stores.readModels.close();
      await stores.blobs.close();
      await stores.rateCounters.close();
      await stores.dataKeys.close();
      lock?.release();
    },
  };
}

/**
 * Read models folded from another event log (SQLite, then EventStoreDB with the same MongoDB)
 * hold checkpoints this log cannot resume from: a start that folds refuses them, naming the
 * fix, rather than fail on every resubscription. The rebuild CLI (which folds nothing until it
 * has reset them) is not stopped by it.
 */
export async function refuseForeignCheckpoints(stores: Pick<Stores, 'events' | 'readModels' | 'description'>, checkpoints: readonly string[]): Promise<void> {
  for (const name of checkpoints) {
    const position = await stores.readModels.getCheckpoint(name);
    if (position !== null && stores.events.recognizes && !stores.events.recognizes(position)) {
      throw new Error(
        `the read models' checkpoint of ${name} (${position}) is not a position of this event log (${stores.description}): ` +
          'they were folded from another event log. Rebuild them from this one (stop the API processes and projector workers, then npm run rebuild), ' +
          'or give this log read models of its own (MONGODB_DATABASE).',
      );
    }
  }
}

const needsDataDir = (config: ParleyConfig) => !config.eventStoreConnectionString || !config.mongodbUri;

function lockDataDir(dataDir: string): DataDirLock {
  try {
    makePrivateDir(dataDir, { tightenExisting: true });
    return DataDirLock.acquire(dataDir);
  } catch (error) {
    throw explainDataDirFailure(dataDir, error);
  }
}

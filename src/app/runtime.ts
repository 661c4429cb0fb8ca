import { ParleyConfig } from '../config/config';
import { SecretBox } from '../shared/crypto/secret-box';
import { openMasterKey } from '../shared/crypto/master-key';
import { ProjectorRunner } from '../shared/application/projector-runner';
import { projectionLagError, ReadYourWrites } from '../shared/application/read-your-writes';
import { LogPosition, positionAfter } from '../shared/domain/event';
import { ReadModelStore } from '../shared/ports/read-model-store.port';
import { openStores, Stores } from '../infrastructure/stores';
import { createLogger, Logger } from '../infrastructure/logger';
import { ALL_PROJECTIONS } from '../../projections';
import { checkpointName } from '../../projections/projection';

/** Where projections run relative to the API. */
export type ProjectorMode = 'in-process' | 'separate';

/** Everything a Parley process holds outside Nest's container: stores, master key, projectors. */
export interface Runtime {
  readonly config: ParleyConfig;
  readonly logger: Logger;
  readonly stores: Stores;
  readonly secretBox: SecretBox;
  readonly runner: ProjectorRunner | null;
  readonly readYourWrites: ReadYourWrites;
  close(): Promise<void>;
}

/**
 * With projectors in another process, a write waits by polling the projections' stored
 * checkpoints until they pass its position, for a bounded time.
 */
export class CheckpointPolling implements ReadYourWrites {
  constructor(
    private readonly readModels: ReadModelStore,
    private readonly timeoutMs: number,
    private readonly intervalMs = 10,
  ) {}

  async waitFor(position: LogPosition): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const checkpoints = await Promise.all(ALL_PROJECTIONS.map((p) => this.readModels.getCheckpoint(checkpointName(p))));
      if (checkpoints.every((c) => c !== null && !positionAfter(position, c))) return;
      if (Date.now() > deadline) throw projectionLagError(this.timeoutMs);
      await new Promise((r) => setTimeout(r, this.intervalMs));
    }
  }
}

export async function openRuntime(config: ParleyConfig, mode: ProjectorMode): Promise<Runtime> {
  const logger = createLogger(config.logLevel);
  const stores = await openStores(config);
  const secretBox = await openMasterKey(config, stores.events);
  let runner: ProjectorRunner | null = null;
  let readYourWrites: ReadYourWrites;
  if (mode === 'in-process') {
    runner = new ProjectorRunner(stores.events, stores.readModels, ALL_PROJECTIONS, {
      onError: (error) => logger.error({ err: error }, 'projector failed'),
    });
    await runner.start();
    await runner.caughtUp();
    const inProcess = runner;
    // Another process may hold a projection's lease (e.g. a second embedded server): then poll.
    const polling = new CheckpointPolling(stores.readModels, config.readYourWritesTimeoutMs);
    readYourWrites = {
      waitFor: (position) =>
        inProcess.running.length === ALL_PROJECTIONS.length ? inProcess.waitFor(position) : polling.waitFor(position),
    };
  } else {
    readYourWrites = new CheckpointPolling(stores.readModels, config.readYourWritesTimeoutMs);
  }
  logger.info(`Parley stores: ${stores.description}`);
  return {
    config,
    logger,
    stores,
    secretBox,
    runner,
    readYourWrites,
    async close() {
      await runner?.stop();
      await stores.ephemeral.close();
      await stores.events.close();
      await stores.readModels.close();
      await stores.blobs.close();
    },
  };
}

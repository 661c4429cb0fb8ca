import { join } from 'node:path';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { ALL_PROJECTIONS } from '../../../projections';
import { ProjectionDefinition } from '../../../projections/projection';
import { SqliteDataKeyStore } from '../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { ReportedHead, SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { createLogger } from '../../infrastructure/logger';
import { DataKeyRing } from '../../shared/crypto/data-key-ring';
import { openMasterKey } from '../../shared/crypto/master-key';
import { SealingEventStore } from '../../shared/application/operations/sealing-event-store';
import { LogPosition } from '../../shared/domain/event';
import { personalDataRulesFor } from '../personal-data-rules';
import { openProjectors } from '../projectors';
import type { FromProjectorThread, ProjectorThreadData, ToProjectorThread } from './protocol';
import { SharedHead } from './shared-head';

/**
 * The embedded server's projector thread: folds the projections (the same ProcessProjectors as
 * on the request thread, same lease owner and options) through connections of its own to
 * DATA_DIR's files, reading the log only up to the head the request thread reports on disk, and
 * opening sealed events with keys it forgets as soon as the request thread destroys them.
 * It reports where each projection stands after every batch (ProjectorThread reads it).
 */
const data = workerData as ProjectorThreadData;
const port = parentPort!;
const post = (message: FromProjectorThread) => port.postMessage(message);

/** The head the request thread made durable (SharedHead): the log's reads stop there; a move wakes them. */
const sharedHead = new SharedHead(data.head);
const head = new (class implements ReportedHead {
  through = sharedHead.through;
  private readonly listeners = new Set<() => void>();
  moveTo(through: number): void {
    if (through <= this.through) return;
    this.through = through;
    for (const listener of [...this.listeners]) listener();
  }
  onMoved(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
})();
const stopFollowingHead = sharedHead.follow((through) => head.moveTo(through));

/** A release lists definitions of this code base: the newest of a name stands for a version it bumped. */
function definitionsOf(listed: ProjectorThreadData['projections']): ProjectionDefinition[] {
  return listed.map(({ name, version }) => {
    const known = ALL_PROJECTIONS.filter((d) => d.name === name).sort((a, b) => b.version - a.version);
    const definition = known.find((d) => d.version === version) ?? known[0];
    if (!definition) throw new Error(`the projector thread does not know the projection ${name}`);
    return definition.version === version ? definition : { ...definition, version };
  });
}

async function main(): Promise<void> {
  const { config } = data;
  const logger = createLogger(config.logLevel).child({ thread: 'projector' });
  const events = new SqliteEventStore(join(config.dataDir, 'events.sqlite'), { reportedHead: head });
  const readModels = new SqliteReadModelStore(join(config.dataDir, 'read-models.sqlite'));
  const dataKeys = new SqliteDataKeyStore(join(config.dataDir, 'keys.sqlite'));
  const secretBox = await openMasterKey(config, events);
  // Not exclusive: the request thread destroys keys; it says so at once (`keys-destroyed`), the TTL bounds the rest.
  const ring = new DataKeyRing(dataKeys, secretBox, { ...config.dataKeyCache, exclusive: false });
  const log = new SealingEventStore(events, ring, personalDataRulesFor(config));
  const batches: [number, number][] = [];
  const projectors = await openProjectors(log, readModels, {
    config,
    owner: data.leaseOwner,
    logger,
    projections: definitionsOf(data.projections),
    recordBatch: (count, seconds) => void batches.push([count, seconds]),
  });

  let stateSent = '';
  let positionsSent = '';
  const report = () => {
    const status = projectors.status();
    const running = projectors.running;
    const state = JSON.stringify([running, status.map((s) => ({ ...s, position: undefined }))]);
    if (state !== stateSent) {
      stateSent = state;
      positionsSent = '';
      post({ kind: 'state', threadId, running, status });
    }
    const positions: (LogPosition | null)[] = status.map((s) => s.position);
    const key = positions.join(',');
    if (key === positionsSent && batches.length === 0) return;
    positionsSent = key;
    post({ kind: 'positions', positions, batches: batches.splice(0) });
  };
  projectors.onProgress(report);
  // A drop changes no position: the status says so within a second.
  const reporting = setInterval(report, 1_000);

  port.on('message', (message: ToProjectorThread) => {
    switch (message.kind) {
      case 'keys-destroyed':
        ring.forgetDestroyed(message.selector);
        return;
      case 'crash':
        if (data.testHooks) setImmediate(() => { throw new Error('projector thread crashed on purpose (test hook)'); });
        return;
      case 'stop':
        void (async () => {
          clearInterval(reporting);
          stopFollowingHead();
          await projectors.stop();
          report();
          await events.close();
          await readModels.close();
          await dataKeys.close();
          post({ kind: 'stopped' });
          port.close();
        })();
        return;
    }
  });

  await projectors.start();
  report();
  post({ kind: 'started' });
}

main().catch((error: unknown) => {
  // Out of the thread: the request thread logs it and starts another after a backoff.
  setImmediate(() => {
    throw error;
  });
});

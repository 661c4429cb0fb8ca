import { parentPort, threadId, workerData } from 'node:worker_threads';
import { ALL_PROJECTIONS } from '../../../projections';
import { ProjectionDefinition } from '../../../projections/projection';
import { ReportedHead } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { openThreadLog } from '../thread-log';
import { openSqliteReadModels } from '../../infrastructure/sqlite-read-models';
import { createLogger } from '../../infrastructure/logger';
import { LogPosition } from '../../shared/domain/event';
import { openProjectors } from '../projectors';
import { deliverWebhooks, webhookContextAt } from '../webhook-delivery-parts';
import type { WebhookDeliveryWorker } from '../../modules/webhooks/deliver-webhooks/webhook-delivery-worker';
import { ProjectionVersions } from '../../shared/application/projection-runtime/projection-versions';
import { VersionedReadModels } from '../../shared/application/projection-runtime/versioned-read-models';
import type { FromProjectorThread, ProjectorThreadData, ToProjectorThread } from './protocol';
import { SharedHead } from './shared-head';
import { rememberSealedTexts } from './sealed-texts';
import { withPartitionedCheckpoints } from '../../shared/application/projection-runtime/partitioned-checkpoints';
import { splitProjections } from '../../shared/application/projection-runtime/projector/projection-parts';
import { collectStartUpGarbage } from '../../infrastructure/start-up-garbage';
import { hostCheckpoints } from '../../adapters/shared/sqlite-wal-checkpointer';

/**
 * The embedded server's projector thread: folds the projections (the same ProcessProjectors as
 * on the request thread, same lease owner and options) through connections of its own to
 * DATA_DIR's files, reading the log only up to the head the request thread reports on disk, and
 * opening sealed events with the plaintexts the request thread sealed them from (handed over
 * before their commit is on disk) or with keys, which it forgets as soon as the request thread
 * destroys them.
 * It reports where each projection stands after every batch (ProjectorThread reads it).
 */
const data = workerData as ProjectorThreadData;
// The process's WAL checkpoints, this thread's and the request thread's, run here: a thread for them alone would cost an isolate.
if (data.checkpoints) hostCheckpoints(data.checkpoints);
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

/** Questions to the request thread (presence, a deactivation), answered by number. */
const asked = new Map<number, { resolve: (answer: unknown) => void; reject: (error: Error) => void }>();
let nextQuestion = 0;
function ask<T>(question: (id: number) => FromProjectorThread): Promise<T> {
  const id = nextQuestion++;
  return new Promise<T>((resolve, reject) => {
    asked.set(id, { resolve: resolve as (answer: unknown) => void, reject });
    post(question(id));
  });
}
function answered(id: number, outcome: { answer: unknown } | { error: Error }): void {
  const question = asked.get(id);
  asked.delete(id);
  if (question && 'answer' in outcome) question.resolve(outcome.answer);
  else question?.reject((outcome as { error: Error }).error);
}

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
  const definitions = definitionsOf(data.projections);
  const readModels = withPartitionedCheckpoints(openSqliteReadModels(config.dataDir), splitProjections(definitions, config.projectorPartitions));
  // The request thread destroys keys; it says so at once (`keys-destroyed`), the TTL bounds the rest.
  const threadLog = await openThreadLog(config, { reportedHead: head });
  const { secretBox, ring, log } = threadLog;
  const batches: [number, number][] = [];
  const projectors = await openProjectors(log, readModels, {
    config,
    owner: data.leaseOwner,
    logger,
    projections: definitions,
    recordBatch: (count, seconds) => void batches.push([count, seconds]),
  });

  let stateSent = '';
  let positionsSent = '';
  const report = () => {
    const status = projectors.status();
    // A split projection is held here when all its partitions are: the request thread asks by its name.
    // (`running` is read once: it is built anew on each read, and a report follows every batch.)
    const folding = new Set(projectors.running);
    const running = [...folding, ...status.map((s) => s.name).filter((name) => !folding.has(name) && projectors.holds(name))];
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

  /**
   * Chatkit webhooks are delivered here once the request thread asks (`deliver-webhooks`), off the
   * request thread: a delivery's HTTP request, mapping and delivery log cost a send nothing there,
   * and the delivery log is written through this thread's connection, beside the projections'
   * batches, not against their write lock. Presence and deactivations are the request thread's.
   */
  let webhooks: WebhookDeliveryWorker | null = null;
  /** Set by a stop (of the deliveries or the thread): no delivery starts after it. */
  let stopping = false;
  const startWebhooks = (origin: string) => {
    if (webhooks || stopping) return;
    webhooks = deliverWebhooks({
      config,
      logger,
      events: log,
      readModels: new VersionedReadModels(readModels, new ProjectionVersions(definitions, (checkpoint) => projectors.positionOf(checkpoint))),
      secretBox,
      owner: data.leaseOwner,
      deactivate: (instanceId, webhookId, failure) => ask<void>((id) => ({ kind: 'deactivate-webhook', id, instanceId, webhookId, failure })),
      contextAt: webhookContextAt(log, secretBox, (instanceId, userIds) => ask<string[]>((id) => ({ kind: 'ask-offline-now', id, instanceId, userIds })), () => origin),
    });
    post({ kind: 'webhooks-started' });
  };

  port.on('message', (message: ToProjectorThread) => {
    switch (message.kind) {
      case 'deliver-webhooks':
        startWebhooks(message.origin);
        return;
      case 'stop-webhooks':
        stopping = true;
        void (webhooks?.stop() ?? Promise.resolve()).then(() => post({ kind: 'webhooks-stopped' }));
        return;
      case 'offline-now':
        answered(message.id, message.error === undefined ? { answer: [...message.offline] } : { error: new Error(message.error) });
        return;
      case 'webhook-deactivated':
        answered(message.id, message.error === undefined ? { answer: undefined } : { error: new Error(message.error) });
        return;
      case 'sealed-texts':
        rememberSealedTexts(ring, message);
        return;
      case 'keys-destroyed':
        ring.forgetDestroyed(message.selector);
        return;
      case 'hurry':
        projectors.hurry(message.checkpoints);
        return;
      case 'crash':
        if (data.testHooks) setImmediate(() => { throw new Error('projector thread crashed on purpose (test hook)'); });
        return;
      case 'stop':
        void (async () => {
          stopping = true;
          // Before the stores close: its checkpoint and delivery log are written (the request thread still answers its questions).
          await webhooks?.stop();
          clearInterval(reporting);
          stopFollowingHead();
          await projectors.stop();
          report();
          await threadLog.close();
          await readModels.close();
          post({ kind: 'stopped' });
          port.close();
        })();
        return;
    }
  });

  await projectors.start();
  report();
  post({ kind: 'started' });
  collectStartUpGarbage();
}

main().catch((error: unknown) => {
  // Out of the thread: the request thread logs it and starts another after a backoff.
  setImmediate(() => {
    throw error;
  });
});

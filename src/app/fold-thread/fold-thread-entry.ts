import { parentPort, workerData } from 'node:worker_threads';
import { ALL_PROJECTIONS } from '../../../projections';
import { checkpointName } from '../../../projections/projection';
import { openSqliteReadModels } from '../../infrastructure/sqlite-read-models';
import { ProjectorRunner } from '../../shared/application/projection-runtime/projector-runner';
import { messageOf } from '../../shared/domain/errors';
import { openThreadLog, ThreadLog } from '../thread-log';
import type { FoldThreadData, FromFoldThread, ToFoldThread } from './protocol';

/**
 * A fold thread (FoldThread): folds some projections of an embedded data directory from its
 * checkpoints to the head the log had when it started, through connections of its own (the log,
 * the read models, the data keys), opening sealed events with keys of its own ring, then closes
 * them and says what it folded.
 */
const data = workerData as FoldThreadData;
const port = parentPort!;
const post = (message: FromFoldThread) => port.postMessage(message);

async function main(): Promise<void> {
  const { config } = data;
  const definitions = data.checkpoints.map((checkpoint) => {
    const definition = ALL_PROJECTIONS.find((d) => checkpointName(d) === checkpoint);
    if (!definition) throw new Error(`the fold thread does not know the projection ${checkpoint}`);
    return definition;
  });
  const readModels = openSqliteReadModels(config.dataDir);
  let threadLog: ThreadLog | undefined;
  let runner: ProjectorRunner | undefined;
  try {
    threadLog = await openThreadLog(config);
    const { log } = threadLog;
    let fail: (error: unknown) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    failed.catch(() => undefined);
    port.on('message', (message: ToFoldThread) => {
      if (message.kind === 'stop') fail(new Error('stopped'));
    });
    runner = new ProjectorRunner(log, readModels, definitions, {
      owner: data.owner,
      leaseTtlMs: data.leaseTtlMs,
      shareOut: false,
      catchUpPage: data.page,
      onError: (error, { freedSpace }) => (freedSpace ? undefined : fail(error)),
      onProgress: (position) => post({ kind: 'progress', position }),
    });
    await runner.start();
    if (runner.running.length !== definitions.length) throw new Error('the fold thread lost a projection lease while starting');
    post({ kind: 'started' });
    await Promise.race([runner.caughtUp(), failed]);
    const stats = runner.stats();
    await runner.stop();
    runner = undefined;
    await Promise.all([threadLog.close(), readModels.close()]);
    post({ kind: 'done', stats });
  } catch (error) {
    await runner?.stop().catch(() => undefined);
    await Promise.all([threadLog?.close(), readModels.close()]).catch(() => undefined);
    post({ kind: 'failed', error: messageOf(error) });
  } finally {
    port.close();
  }
}

void main();

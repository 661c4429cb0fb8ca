import { INestApplicationContext } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { ParleyConfig } from '../config/config';
import { DataDirInUseError, DataDirLock } from '../infrastructure/data-dir-lock';
import { Actor } from '../shared/domain/event';
import { DomainError } from '../shared/domain/errors';
import { ErasureWorker } from '../modules/erasures/erasure-worker';
import { Erasures } from '../modules/erasures/erasures';
import { presentErasure } from '../modules/erasures/get-erasure/get-erasure';
import { CliIo } from './cli-io';

/** How often the CLI reads the progress of an erasure another process runs. */
const POLL_MS = 250;
/** How long it follows one before it leaves it to that process. */
const FOLLOW_MS = 10 * 60_000;

/**
 * `npm run admin -- user:erase <instance> <user_id>`: requests the erasure and prints what was
 * erased once it completed. Beside a running embedded server (DATA_DIR locked, keys in
 * DATA_DIR/keys.sqlite) the server runs it: it alone destroys the keys it keeps in memory, so
 * this process only follows it. Otherwise this process runs it, holding DATA_DIR's lock
 * meanwhile so that no server starts on it halfway.
 */
export async function eraseUser(app: INestApplicationContext, config: ParleyConfig, instanceId: string, userId: string, actor: Actor, io: CliIo): Promise<void> {
  let lock: DataDirLock | null = null;
  let serverRuns = false;
  if (!config.mongodbUri) {
    try {
      lock = DataDirLock.acquire(config.dataDir);
    } catch (error) {
      if (!(error instanceof DataDirInUseError)) throw error;
      serverRuns = true;
    }
  }
  try {
    const erasures = app.get(Erasures);
    const id = await erasures.request(instanceId, userId, actor);
    io.err(`Erasure ${id} of user "${userId}" requested${serverRuns ? '; the running server erases it' : ''}`);
    if (!serverRuns) await app.get(ErasureWorker).runToEnd(instanceId, id);
    const deadline = Date.now() + FOLLOW_MS;
    for (;;) {
      const erasure = presentErasure(id, await erasures.status(instanceId, id));
      if (erasure.status === 'completed') {
        io.out(JSON.stringify(erasure, null, 2));
        return;
      }
      if (Date.now() > deadline) {
        throw new DomainError('unavailable', 'erasure_running', `The erasure ${id} is still running (step ${erasure.step ?? 'not begun'}); follow it with GET /services/parley_admin/v1/${instanceId}/erasures/${id}`);
      }
      await sleep(POLL_MS);
    }
  } finally {
    lock?.release();
  }
}

import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { dataKeyIds } from '../../../shared/domain/personal-data';

/** Keys made ready per block: one durable write of the key store for this many new users. */
export const PROFILE_KEY_BLOCK = 1_000;
/** A new block is made while the last ones of the current block are handed out, so creates do not wait for it. */
const REFILL_BELOW = 500;

interface Pool {
  readonly ready: string[];
  refill: Promise<void> | null;
}

/**
 * The data keys new users' profiles are sealed with, made ready ahead a block at a time
 * (`dataKeyIds.profileBlock`, one durable write per block, on the pipeline's store), so that
 * creating a user, or a batch of them, writes no key of its own and costs one durable write,
 * the log's, as before profiles were sealed. Each key is handed out once, by this process, and
 * only once it is durable. Keys of a block no user took (a stop, a refused create) seal
 * nothing; the instance wipe destroys them with the rest.
 */
@Injectable()
export class ProfileKeys {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly pipeline: CommandPipeline) {}

  /** `count` profile keys of the instance, none handed out before. */
  async take(instanceId: string, count = 1): Promise<string[]> {
    let pool = this.pools.get(instanceId);
    if (!pool) this.pools.set(instanceId, (pool = { ready: [], refill: null }));
    const taken: string[] = [];
    while (taken.length < count) {
      // From the end: taking from the front would move the rest of the block on every create.
      if (pool.ready.length === 0) await this.refill(instanceId, pool);
      else taken.push(pool.ready.pop()!);
    }
    // A failure here is retried by the next take, which then waits for it.
    if (pool.ready.length < REFILL_BELOW) this.refill(instanceId, pool).catch(() => undefined);
    return taken;
  }

  private refill(instanceId: string, pool: Pool): Promise<void> {
    pool.refill ??= (async () => {
      const block = dataKeyIds.profileBlock(instanceId, randomUUID());
      const ids = Array.from({ length: PROFILE_KEY_BLOCK }, (_, i) => `${block}${i}`);
      try {
        await this.pipeline.prepareKeys(ids.map((id) => ({ id, owner: null })));
        pool.ready.push(...ids);
      } finally {
        pool.refill = null;
      }
    })();
    return pool.refill;
  }
}

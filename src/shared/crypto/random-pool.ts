import { randomBytes } from 'node:crypto';

/** Bytes drawn from the system's generator at once: one call per this many bytes handed out, not one per caller. */
const POOL_BYTES = 16 * 1024;
let pool = Buffer.alloc(0);
let at = 0;

/**
 * `count` bytes from the cryptographically secure generator (`randomBytes`), drawn a pool at a
 * time as `randomUUID` draws its own: a call for randomness costs far more than the bytes it
 * gives (IVs and event ids are wanted on every append). Each byte is handed out once. The
 * answer is a view of the pool: read it or copy it at once, never keep or write it.
 */
export function randomFromPool(count: number): Buffer {
  if (count > POOL_BYTES) return randomBytes(count);
  if (at + count > pool.length) {
    pool = randomBytes(POOL_BYTES);
    at = 0;
  }
  at += count;
  return pool.subarray(at - count, at);
}

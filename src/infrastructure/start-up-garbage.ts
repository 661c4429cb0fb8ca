import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Scavenges of this isolate's young generation, some seconds apart, a moment after its start-up
 * is done: a catch-up's pages and the start-up (thousands of modules compiled, Nest's scan) grow
 * the young generation, which V8 keeps resident (two 16 MiB semi-spaces) until a collection finds
 * the allocation rate low, and an idle thread is not collected again. Measured on the request
 * thread: RSS 173 -> 136 MiB; a scavenge paused it 6–17 ms.
 *
 * Scavenges only: a mark-compact (`gc()`) paused the request thread 24–53 ms and left resident
 * memory where V8's own memory reducer takes it anyway about 40 s after the start (111.9 against
 * 112.4 MiB). Until 2026-11-27 the projector thread asked for `gc({ type: 'major' })`, which on
 * Node 20 (V8 11.3) is a scavenge as well (`--trace-gc` says so): what was measured there (its
 * heap 31.5 -> 16.5 MB committed) was the scavenges'.
 *
 * None runs while `busy` says the thread is (a request in flight): a server already serving has
 * its young generation in use, and the collection would only delay an answer.
 *
 * `gc` is exposed the way jest's leak detector gets it.
 */
export interface StartUpCollection {
  /** Skips a collection while this says the thread is busy. */
  readonly busy?: () => boolean;
}

/**
 * How long after start-up, and between collections: V8 gives the young generation's space back
 * only at a collection that finds the allocation rate low (one right at the end of the start-up
 * keeps it; measured, a scavenge 3 and 6 s after listening did not give it back, one 15 s after did).
 */
const SETTLE_MS = 5_000;

/** The collections give up after this many that left the young generation grown (a server serving all along). */
const YOUNG_TRIES = 8;

/** More than this committed to the young generation is what a start-up grew (V8 starts it at 1 MiB a semi-space). */
const GROWN_YOUNG_BYTES = 8 * 1024 * 1024;

const youngCommitted = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;

export function collectStartUpGarbage({ busy = () => false }: StartUpCollection = {}): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'minor' }) => void;
  let tries = 0;
  const collectYoung = () => {
    if (youngCommitted() <= GROWN_YOUNG_BYTES || tries++ >= YOUNG_TRIES) return;
    if (!busy()) gc({ type: 'minor' });
    setTimeout(collectYoung, SETTLE_MS).unref();
  };
  setTimeout(collectYoung, SETTLE_MS).unref();
}

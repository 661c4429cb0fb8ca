import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Garbage collections of this isolate, some seconds apart, a moment after its start-up is done: a catch-up's pages and the start-up (thousands of modules compiled, Nest's scan, the
 * OpenAPI document) leave garbage and a grown young generation, which V8 keeps resident until
 * allocation pressure asks for a collection, and an idle thread never does.
 *
 * - The projector thread collects in full: its heap went from 31.5 to 16.5 MB committed (the
 *   process's RSS about 182 -> 168 MiB). Each costs a pause of some tens of ms of that thread
 *   (folding waits; no request does).
 * - The request thread collects only its young generation (a scavenge): that is where the
 *   start-up left 32 MiB committed (two 16 MiB semi-spaces), scavenged every few seconds until
 *   V8 gives them back (measured: RSS 173 -> 136 MiB). A scavenge paused that thread 6–17 ms
 *   where a full collection took 53–109 ms, and none runs while a request is in flight: a server
 *   already serving has its young generation in use, and the collection would only delay an answer.
 *
 * `gc` is exposed the way jest's leak detector gets it.
 */
export interface StartUpCollection {
  /** `young`: scavenges only (the request thread); `full`: mark-compact (the projector thread). */
  readonly generation: 'young' | 'full';
  /** Skips a collection while this says the thread is busy. */
  readonly busy?: () => boolean;
}

/**
 * How long after start-up, and between collections: V8 gives the young generation's space back
 * only at a collection that finds the allocation rate low (one right at the end of the start-up
 * keeps it; measured, a scavenge 3 and 6 s after listening did not give it back, one 15 s after did).
 */
const SETTLE_MS = 5_000;

/** The young generation's collections give up after this many that left it grown (a server serving all along). */
const YOUNG_TRIES = 8;

/** More than this committed to the young generation is what a start-up grew (V8 starts it at 1 MiB a semi-space). */
const GROWN_YOUNG_BYTES = 8 * 1024 * 1024;

const youngCommitted = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;

export function collectStartUpGarbage({ generation, busy = () => false }: StartUpCollection): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;
  if (generation === 'full') {
    // The first collection frees the garbage; V8 gives the emptied pages back to the system at a later one.
    setTimeout(() => {
      gc({ type: 'major' });
      setTimeout(() => gc({ type: 'major' }), SETTLE_MS).unref();
    }, SETTLE_MS).unref();
    return;
  }
  let tries = 0;
  const collectYoung = () => {
    if (youngCommitted() <= GROWN_YOUNG_BYTES || tries++ >= YOUNG_TRIES) return;
    if (!busy()) gc({ type: 'minor' });
    setTimeout(collectYoung, SETTLE_MS).unref();
  };
  setTimeout(collectYoung, SETTLE_MS).unref();
}

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Two garbage collections of this isolate, some seconds apart, a moment after its start-up is
 * done: a catch-up's pages and the start-up (thousands of modules compiled, Nest's scan, the
 * OpenAPI document) leave garbage and a grown young generation, which V8 keeps resident until
 * allocation pressure asks for a collection, and an idle thread never does.
 *
 * - The projector thread collects in full: its heap went from 31.5 to 16.5 MB committed (the
 *   process's RSS about 182 -> 168 MiB). Each costs a pause of some tens of ms of that thread
 *   (folding waits; no request does).
 * - The request thread collects only its young generation (a scavenge): that is where the
 *   start-up left 32 MiB committed (two 16 MiB semi-spaces), given back at the second one
 *   (measured: RSS 173 -> 148 MiB). A scavenge paused that thread 6–17 ms where a full
 *   collection took 53–109 ms, and it runs only while no request is in flight: a server already
 *   serving has its young generation in use, and the collection would only delay an answer.
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
 * How long after start-up: V8 gives the young generation's space back only when the allocation
 * rate has fallen (a collection right at the end of the start-up keeps it).
 */
const SETTLE_MS = 3_000;

export function collectStartUpGarbage({ generation, busy = () => false }: StartUpCollection): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;
  const collect = () => {
    if (!busy()) gc({ type: generation === 'young' ? 'minor' : 'major' });
  };
  // The first collection frees the garbage; V8 gives the emptied pages back to the system at a later one.
  setTimeout(() => {
    collect();
    setTimeout(collect, SETTLE_MS).unref();
  }, SETTLE_MS).unref();
}

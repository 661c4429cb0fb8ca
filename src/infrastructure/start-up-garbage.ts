import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Two full garbage collections of this isolate, some seconds apart, a moment after its start-up
 * is done (the projector thread has caught up): a catch-up's pages and the start-up leave garbage
 * and a grown young generation, which V8 keeps resident until allocation pressure asks for a
 * full collection, and an idle thread never does: measured, the projector thread's heap went
 * from 31.5 to 16.5 MB committed (the process's RSS about 182 -> 168 MiB). Each costs a pause of
 * some tens of ms of that thread (folding waits; no request does). Not on the request thread:
 * its pause would fall on the first requests after a start, and there the young generation was
 * not given back within the seconds tried. `gc` is exposed the way jest's leak detector gets it.
 */
/**
 * How long after start-up: V8 gives the young generation's space back only when the allocation
 * rate has fallen (a collection right at the end of the start-up keeps it).
 */
const SETTLE_MS = 3_000;

export function collectStartUpGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // The first collection frees the garbage; V8 gives the emptied pages back to the system at a later one.
  setTimeout(() => {
    gc();
    setTimeout(gc, SETTLE_MS).unref();
  }, SETTLE_MS).unref();
}

import type { Document } from '../../projections/projection';

/**
 * A projection's `evolve` that counts its events per document, each fold taking `foldMs` of the
 * thread synchronously, as a busy machine's might: for specs of folds that outlast their leases.
 */
export const slowCount =
  (foldMs: number) =>
  (document: Document | null): Document => {
    const until = Date.now() + foldMs;
    while (Date.now() < until); // a fold that takes its time, synchronously
    return { _id: '', n: ((document?.n as number | undefined) ?? 0) + 1 };
  };

import { LogPosition } from '../../../domain/event';
import { BatchTooLargeError, DocumentChange, LeaseFence, ReadModelStore } from '../../../ports/read-model-store.port';

/**
 * Writes a flush's changes, with its checkpoints in the last write: in parts of at most
 * `changesPerWrite` changes (the store's bound), halved whenever the store finds a part too
 * large for one transaction; the halved bound holds for the writes after it. Parts before the
 * last move no checkpoint: a crash between them redoes the events, and the position each
 * document records skips what was written.
 */
export class BoundedWriter {
  private changesPerWrite: number;

  constructor(
    private readonly store: ReadModelStore,
    /** The leases every write is fenced by (none: unfenced). */
    private readonly fences: readonly LeaseFence[] = [],
  ) {
    this.changesPerWrite = store.batchLimit?.changes ?? Infinity;
  }

  /** The most changes one write carries now. */
  get bound(): number {
    return this.changesPerWrite;
  }

  async write(changes: readonly DocumentChange[], checkpoints: Readonly<Record<string, LogPosition>>): Promise<void> {
    let start = 0;
    for (;;) {
      const end = Math.min(changes.length, start + this.changesPerWrite);
      const last = end === changes.length;
      try {
        await this.store.applyBatch(start === 0 && last ? changes : changes.slice(start, end), last ? checkpoints : {}, this.fences);
      } catch (error) {
        if (!(error instanceof BatchTooLargeError) || end - start <= 1) throw error;
        this.changesPerWrite = Math.max(1, Math.floor((end - start) / 2));
        continue;
      }
      if (last) return;
      start = end;
    }
  }
}

import { LogPosition } from '../../domain/event';
import { ReadModelStore } from '../../ports/read-model-store.port';
import { SealingEventStore } from './sealing-event-store';

/** The read models' checkpoint of how far the sweep has destroyed what the log's deletes destroy. */
export const SHRED_SWEEP_CHECKPOINT = 'shred_sweep';

const PAGE = 500;

/**
 * Heals a crash between a delete's append and the destroy of its data keys: every delete in
 * the log after the sweep's checkpoint (all of them the first time) destroys its keys again,
 * bounded to keys created before the delete was recorded (`createdUpTo`), so a replay never
 * reaches what a later user of the same ids wrote. Destroying what is gone is no error, so
 * a pass may repeat any part of another. Run at start and periodically (PeriodicSweep).
 * It is also the only destroy of the `deferred` rules' keys (a Beams publish's delivery):
 * a page's worth in one write, so the sweep's interval bounds how long they outlive their event.
 */
export class ShredSweep {
  constructor(
    private readonly log: Pick<SealingEventStore, 'readAll' | 'headPosition' | 'shredsOf' | 'shredTypes' | 'destroyNow'>,
    private readonly readModels: Pick<ReadModelStore, 'getCheckpoint' | 'applyBatch'>,
  ) {}

  /** Sweeps the log from its checkpoint to its head; answers how many deletes it went through. */
  async pass(): Promise<number> {
    let after: LogPosition | null = await this.readModels.getCheckpoint(SHRED_SWEEP_CHECKPOINT);
    // Read first: every event up to it is in the pages read after, so the sweep may then move past it.
    const head = await this.log.headPosition();
    let swept = 0;
    for (;;) {
      const page = await this.log.readAll({ after, maxCount: PAGE, filter: { eventTypes: this.log.shredTypes } });
      if (page.length === 0) {
        // No delete since: the next pass starts from the head, not again from the last delete.
        if (head !== null && (after === null || head > after)) await this.readModels.applyBatch([], { [SHRED_SWEEP_CHECKPOINT]: head });
        return swept;
      }
      // The deferred rules' keys (by id, never made again) of the whole page, destroyed in one write.
      const deferredIds: string[] = [];
      for (const event of page) {
        const upTo = Date.parse(event.recordedAt);
        const selectors = (await this.log.shredsOf(event.streamName, [event], 'at-append')).map((s) => ({ ...s, createdUpTo: upTo }));
        for (const selector of await this.log.shredsOf(event.streamName, [event], 'deferred')) {
          if ('ids' in selector) deferredIds.push(...selector.ids);
          else selectors.push({ ...selector, createdUpTo: upTo });
        }
        if (selectors.length) await this.log.destroyNow(selectors);
        swept++;
      }
      after = page[page.length - 1].position;
      if (deferredIds.length) await this.log.destroyNow([{ ids: deferredIds, createdUpTo: Date.parse(page[page.length - 1].recordedAt) }]);
      await this.readModels.applyBatch([], { [SHRED_SWEEP_CHECKPOINT]: after });
    }
  }
}

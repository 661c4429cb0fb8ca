import { LogPosition, RecordedEvent, positionAfter } from '../../../domain/event';
import { Document, DocumentChange, LeaseFence, ReadModelStore, StoredDocument } from '../../../ports/read-model-store.port';
import { isRef, Target } from '../../../../../projections/projection';
import { BoundedWriter } from './bounded-writer';
import { ProjectionEventError } from './projection-event-error';
import { ProjectionSlot } from './projection-slot';
import { StartedEmpty } from './written-ids';

export interface BatchFolderOptions {
  /** The leases every write is fenced by (none: unfenced). */
  readonly fences?: readonly LeaseFence[];
  /** Physical collections that held nothing when the pass began: reads of ids it never wrote there are skipped. */
  readonly startedEmpty?: Iterable<string>;
  /**
   * A projection failed on an event (its `targets` or `evolve` threw): it stops just before
   * the event for the rest of the batch, keeping what it folded before, while the others fold
   * on. Told as it happens, before the batch is written.
   */
  readonly onProjectionFailed: (error: ProjectionEventError) => void;
  /** Part of a batch was written before its end (a selection or the store's bound forced it): positions moved. */
  readonly onPartialWrite?: () => void;
  /**
   * Asked before the batch is folded, between its events and before each write: renews the
   * leases when due, rejects when one was lost (the batch is then not written); null when there
   * is nothing to wait for (ProjectionLeases.keepWhileFolding).
   */
  readonly keepLeases?: () => Promise<void> | null;
}

/** A document of the batch as folded so far: `dirty` until written. */
type Cached = { document: StoredDocument['document'] | null; position: LogPosition | null; dirty: boolean };

/** One projection's share of one event of a batch: the documents it targets, or what `targets` threw. */
interface Step {
  readonly index: number;
  readonly slot: ProjectionSlot;
  readonly targets: readonly Target[];
  /** An event of no partition (`EventShare`): the slot changes only documents it owns, and creates none. */
  readonly shared: boolean;
  readonly failure?: { readonly error: unknown };
}

/**
 * Folds batches of the log into the projections' documents and writes them with the
 * projections' checkpoints. What each event targets is known before anything is folded, so
 * the documents named by key are read with one query per collection; they are folded in
 * memory and written together, with every checkpoint, fenced by the leases. A selection (and
 * a target's `reads`) reads the store, so what was folded before it is written first; a batch
 * larger than the store's bound is written in several (`BoundedWriter`). A document already reflecting an event (its
 * recorded position) skips it: a redelivered event changes nothing.
 *
 * One folder serves one pass (one claim of leases): its store bound and its started-empty
 * collections hold for that pass.
 */
export class BatchFolder {
  private readonly writer: BoundedWriter;
  private readonly startedEmpty: StartedEmpty;

  constructor(
    private readonly store: ReadModelStore,
    private readonly options: BatchFolderOptions,
  ) {
    this.writer = new BoundedWriter(store, options.fences);
    this.startedEmpty = new StartedEmpty(options.startedEmpty);
  }

  /**
   * Folds one batch (events in log order) into the projections given, moving each one's
   * position as it is written; resolves with how many document changes were folded.
   */
  async fold(batch: readonly RecordedEvent[], slots: readonly ProjectionSlot[]): Promise<number> {
    const limit = this.store.batchLimit;
    await this.keepLeases();
    // The batch's documents by physical collection and id: read once, folded in memory, written together.
    const cache = new Map<string, Map<string, Cached>>();
    const documentsOf = (collection: string): Map<string, Cached> => {
      let documents = cache.get(collection);
      if (!documents) cache.set(collection, (documents = new Map()));
      return documents;
    };
    let applied = 0;
    let done = 0; // events of the batch already written (before a selection or the store's bound forced a flush)
    const documentsBy = new Map<ProjectionSlot, number>();
    /** The changes folded since the last flush, against the store's bound. */
    const pending = { changes: 0, bytes: 0 };
    /** Projections that failed in this batch: the index of the event they stopped at. */
    const stoppedAt = new Map<ProjectionSlot, number>();

    /**
     * Writes what is folded so far. Checkpoints move to the last event every projection folded
     * whole: `upTo` (exclusive), or the event a failing projection stopped at. Documents may
     * already reflect a later event than their projection's checkpoint (a flush within an
     * event): redone, that event skips them by the position each records.
     */
    const flush = async (upTo: number) => {
      const changes: DocumentChange[] = [];
      for (const [collection, documents] of cache) {
        for (const [id, c] of documents) {
          if (!c.dirty) continue;
          this.startedEmpty.noteWritten(collection, id);
          changes.push(c.document ? { collection, kind: 'put', document: c.document, position: c.position! } : { collection, kind: 'delete', id });
          c.dirty = false;
        }
      }
      pending.changes = 0;
      pending.bytes = 0;
      const checkpoints: Record<string, LogPosition> = {};
      for (const slot of slots) {
        const end = Math.min(upTo, stoppedAt.get(slot) ?? upTo);
        if (end > 0 && positionAfter(batch[end - 1].position, slot.position)) checkpoints[slot.checkpoint] = batch[end - 1].position;
      }
      if (changes.length || Object.keys(checkpoints).length) {
        await this.keepLeases();
        await this.writer.write(changes, checkpoints);
      }
      for (const slot of slots) if (checkpoints[slot.checkpoint]) slot.position = checkpoints[slot.checkpoint];
      for (const [slot, n] of documentsBy) slot.stats.documents += n;
      documentsBy.clear();
      done = upTo;
      if (upTo < batch.length) this.options.onPartialWrite?.();
    };
    /** Whether the changes folded since the last flush reach the store's bound: then they are written, within an event if need be. */
    const full = () => limit !== undefined && (pending.changes >= limit.changes || pending.bytes >= limit.bytes);

    const steps = this.plan(batch, slots);
    await this.keepLeases();
    await this.prefetch(steps, documentsOf);

    const fold = (slot: ProjectionSlot, event: RecordedEvent, collection: string, entry: Cached, id: string, read?: readonly (readonly Document[])[]) => {
      if (entry.position !== null && !positionAfter(event.position, entry.position)) return; // already folded
      let next;
      try {
        next = slot.definition.evolve(entry.document, event, { collection, id }, read);
      } catch (error) {
        throw new ProjectionEventError(slot.checkpoint, event, error);
      }
      if (next === entry.document) return;
      entry.document = next === null || next._id === id ? next : { ...next, _id: id };
      entry.position = event.position;
      if (!entry.dirty) {
        documentsBy.set(slot, (documentsBy.get(slot) ?? 0) + 1);
        pending.changes++;
        // Sized once per write, as it first changes: a document rarely grows much within a batch.
        if (limit) pending.bytes += entry.document ? JSON.stringify(entry.document).length : 64;
      }
      entry.dirty = true;
      applied++;
    };

    /** The last event the leases were asked about before its first step. */
    let keptAt = -1;
    for (const { index, slot, targets, shared, failure } of steps) {
      // Once per event, not per step, and awaited only when due: a step often takes a few
      // microseconds, and the clock read behind the question a tenth of one on a virtual machine.
      if (index !== keptAt) {
        keptAt = index;
        const keeping = this.options.keepLeases?.();
        if (keeping) await keeping;
      }
      if (stoppedAt.has(slot)) continue;
      const event = batch[index];
      slot.stats.events++;
      try {
        if (failure) throw new ProjectionEventError(slot.checkpoint, event, failure.error);
        for (const target of targets) {
          const documents = documentsOf(slot.collection(target.collection));
          let read: Document[][] | undefined;
          if (target.reads) {
            // The reads see the store: everything folded so far, this event's earlier targets included, goes first.
            if (index > done || pending.changes > 0) await flush(index);
            read = await Promise.all(target.reads.map(({ collection, ...query }) => this.store.find(slot.collection(collection), query)));
          }
          if (isRef(target)) {
            // Not cached: it was not in the store when the batch began (read above, or known
            // never written), and nothing in the batch has made it since.
            let entry = documents.get(target.id);
            if (!entry) documents.set(target.id, (entry = { document: null, position: null, dirty: false }));
            if (shared && !(entry.document && slot.ownsDocument(entry.document))) continue;
            fold(slot, event, target.collection, entry, target.id, read);
            if (full()) await flush(index);
            continue;
          }
          // A selection reads the store, so everything folded so far must be in it first.
          if (index > done) await flush(index);
          const refs: string[] = [];
          for (const stored of await this.store.findStored(slot.collection(target.collection), { where: target.where })) {
            const id = stored.document._id;
            const cached = documents.get(id);
            if (!cached || !cached.dirty) documents.set(id, { document: stored.document, position: stored.position, dirty: false });
            // Another partition's document is its own worker's to change (it folds this event too).
            const document = documents.get(id)!.document;
            if (document && slot.ownsDocument(document)) refs.push(id);
          }
          for (const id of refs) {
            fold(slot, event, target.collection, documents.get(id)!, id, read);
            if (full()) await flush(index);
          }
        }
      } catch (error) {
        if (!(error instanceof ProjectionEventError)) throw error;
        // This projection stops at the event, keeping what it folded before; the others go on.
        stoppedAt.set(slot, index);
        this.options.onProjectionFailed(error);
      }
    }
    await flush(batch.length);
    return applied;
  }

  /** Renews the leases if due (see `keepLeases`). */
  private async keepLeases(): Promise<void> {
    await this.options.keepLeases?.();
  }

  /**
   * What each projection targets, event by event: pure, so known before anything is folded.
   * A `targets` that throws is noted, and thrown in turn when folding, so that an earlier
   * event's failure is still the one reported.
   */
  private plan(batch: readonly RecordedEvent[], slots: readonly ProjectionSlot[]): Step[] {
    const steps: Step[] = [];
    // The slots folding each event type, found once per batch rather than asked of every slot per event.
    const slotsByType = new Map<string, ProjectionSlot[]>();
    for (let index = 0; index < batch.length; index++) {
      const event = batch[index];
      let handling = slotsByType.get(event.type);
      if (!handling) slotsByType.set(event.type, (handling = slots.filter((slot) => slot.handles.has(event.type))));
      for (const slot of handling) {
        if (!positionAfter(event.position, slot.position)) continue;
        const share = slot.share(event);
        if (share === 'other') continue; // another partition's
        const shared = share === 'shared';
        try {
          steps.push({ index, slot, targets: slot.definition.targets(event), shared });
        } catch (error) {
          steps.push({ index, slot, targets: [], shared, failure: { error } });
        }
      }
    }
    return steps;
  }

  /** Reads the documents the steps name by key, one query per collection (none known never written). */
  private async prefetch(steps: readonly Step[], documentsOf: (collection: string) => Map<string, Cached>): Promise<void> {
    const wanted = new Map<string, Set<string>>();
    for (const { slot, targets } of steps) {
      for (const target of targets) {
        if (!isRef(target)) continue;
        const collection = slot.collection(target.collection);
        if (this.startedEmpty.certainlyAbsent(collection, target.id)) continue;
        let ids = wanted.get(collection);
        if (!ids) wanted.set(collection, (ids = new Set()));
        ids.add(target.id);
      }
    }
    for (const [collection, ids] of wanted) {
      const documents = documentsOf(collection);
      for (const stored of await this.store.getStoredMany(collection, [...ids])) {
        documents.set(stored.document._id, { document: stored.document, position: stored.position, dirty: false });
      }
    }
  }
}

import { ReadModelStore } from '../../ports/read-model-store.port';
import { ForwardingReadModelStore } from './forwarding-read-model-store';
import { ProjectionVersions } from './projection-versions';

/**
 * The read-model store as queries see it: collections are named as projections name them
 * (`users`, `messages`…) and read from whichever version of their projection serves now.
 * Writes, checkpoints and leases pass through unchanged (the projector runner names physical
 * collections itself).
 */
export class VersionedReadModels extends ForwardingReadModelStore {
  constructor(
    inner: ReadModelStore,
    private readonly versions: ProjectionVersions,
  ) {
    super(inner);
  }

  protected override nameOf(collection: string): string {
    return this.versions.collection(collection);
  }
}

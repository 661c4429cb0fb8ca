import type { RecordedEvent } from '../src/shared/domain/event';
import { INSTANCE_WIPED } from '../src/shared/domain/instance-wipe';
import { parseStreamName } from '../src/shared/domain/streams';
import type { Document, ProjectionDefinition } from './projection';

/**
 * A projection that also forgets a wiped instance: on `InstanceWiped` every document of the
 * instance in each of its collections (selected by `instance_id`) goes, or becomes what
 * `onWiped` makes of it (the attachments keep a tombstone until their bytes are removed).
 * Events after the wipe build the instance's documents afresh, in log order as always.
 */
export const forgettingWipedInstances = (
  projection: ProjectionDefinition,
  onWiped: (document: Document | null, event: RecordedEvent) => Document | null = () => null,
): ProjectionDefinition => ({
  ...projection,
  handles: [...projection.handles, INSTANCE_WIPED],
  targets(event) {
    if (event.type !== INSTANCE_WIPED) return projection.targets(event);
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    return projection.collections.map((c) => ({ collection: c.name, where: { instance_id: stream.instanceId } }));
  },
  evolve(document, event, target) {
    return event.type === INSTANCE_WIPED ? onWiped(document, event) : projection.evolve(document, event, target);
  },
});

import type { DomainEvent, RecordedEvent } from '../src/shared/domain/event';
import { INSTANCE_WIPED } from '../src/shared/domain/instance-wipe';
import { parseStreamName } from '../src/shared/domain/streams';
import type { InstanceWiped } from '../src/modules/wipe/domain/instance-wipe.decider';
import type { Document, ProjectionDefinition } from './projection';

const isWipe = <E extends DomainEvent>(event: RecordedEvent<E | InstanceWiped>): event is RecordedEvent<InstanceWiped> =>
  event.type === INSTANCE_WIPED;

/**
 * A projection that also forgets a wiped instance: on `InstanceWiped` every document of the
 * instance in each of its collections (selected by `instance_id`) goes, or becomes what
 * `onWiped` makes of it (the attachments keep a tombstone until their bytes are removed).
 * Events after the wipe build the instance's documents afresh, in log order as always.
 */
export const forgettingWipedInstances = <E extends DomainEvent, D extends Document>(
  projection: ProjectionDefinition<E, D>,
  onWiped: (document: D | null, event: RecordedEvent<InstanceWiped>) => D | null = () => null,
): ProjectionDefinition<E | InstanceWiped, D> => ({
  ...projection,
  handles: [...projection.handles, INSTANCE_WIPED],
  destroys: [...(projection.destroys ?? []), INSTANCE_WIPED],
  targets(event) {
    if (!isWipe(event)) return projection.targets(event);
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    return projection.collections.map((c) => ({ collection: c.name, where: { instance_id: stream.instanceId } }));
  },
  evolve(document, event, target, read) {
    return isWipe(event) ? onWiped(document, event) : projection.evolve(document, event, target, read);
  },
});

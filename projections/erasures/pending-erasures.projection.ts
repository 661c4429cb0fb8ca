import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { ErasureCompleted, ErasureRequested } from '../../src/modules/erasures/domain/erasure.events';
import type { InstanceWiped } from '../../src/modules/wipe/domain/instance-wipe.decider';
import type { Document, ProjectionDefinition } from '../projection';

export const PENDING_ERASURES = 'pending_erasures';
/** The erasure streams' category (`erasure-<instance>.<id>`), as the erasures' domain names it. */
const ERASURE_CATEGORY = 'erasure';

export interface PendingErasureDocument extends Document {
  readonly instance_id: string;
  readonly id: string;
  readonly requested_at: string;
}

export const pendingErasureDocumentId = (instanceId: string, erasureId: string) => documentId(instanceId, erasureId);

/**
 * The erasure worker's work list: an erasure is here from its request until it completes, so
 * one whose process died is resumed after a restart. (Its progress is read from its stream.)
 * An instance wipe drops its pending erasures: the wipe destroyed every key of the instance.
 */
export const pendingErasuresProjection: ProjectionDefinition<ErasureRequested | ErasureCompleted | InstanceWiped, PendingErasureDocument> = {
  name: 'pending_erasures',
  version: 1,
  collections: [{ name: PENDING_ERASURES, indexes: [{ fields: ['instance_id'] }, { fields: ['requested_at'] }] }],
  handles: ['ErasureRequested', 'ErasureCompleted', 'InstanceWiped'],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    if (event.type === 'InstanceWiped') return [{ collection: PENDING_ERASURES, where: { instance_id: stream.instanceId } }];
    if (stream.category !== ERASURE_CATEGORY) return [];
    return [{ collection: PENDING_ERASURES, id: pendingErasureDocumentId(stream.instanceId, stream.id) }];
  },

  evolve(_document, event) {
    if (event.type !== 'ErasureRequested') return null;
    const stream = parseStreamName(event.streamName)!;
    return { _id: '', instance_id: stream.instanceId, id: stream.id, requested_at: event.data.requested_at } satisfies PendingErasureDocument;
  },
};

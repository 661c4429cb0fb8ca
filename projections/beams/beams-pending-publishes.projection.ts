import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { BeamsPublishAccepted, BeamsPublishDelivered, BeamsUserDeleted, PublishTarget } from '../../src/modules/beams/domain/beams.events';
import type { Document, ProjectionDefinition } from '../projection';
import { BEAMS_PUBLISH_CATEGORY, BEAMS_USER_CATEGORY } from '../../src/modules/beams/domain/beams.deciders';

export const BEAMS_PENDING_PUBLISHES = 'beams_pending_publishes';

export interface BeamsPendingPublishDocument extends Document {
  readonly instance_id: string;
  readonly publish_id: string;
  readonly target: PublishTarget;
  readonly request: Record<string, unknown>;
  readonly accepted_at: string;
}

/**
 * The delivery worker's work list: a publish is here from its acceptance until its delivery
 * is recorded, so a publish acknowledged before a crash is delivered after the restart. A
 * delete of a user it is addressed to empties its notification (destroyed in the log too):
 * it is then delivered as nothing, and leaves.
 */
export const beamsPendingPublishesProjection: ProjectionDefinition<
  BeamsPublishAccepted | BeamsPublishDelivered | BeamsUserDeleted,
  BeamsPendingPublishDocument
> = {
  name: 'beams_pending_publishes',
  version: 1,
  collections: [{ name: BEAMS_PENDING_PUBLISHES, indexes: [{ fields: ['instance_id'] }, { fields: ['accepted_at'] }] }],
  handles: ['BeamsPublishAccepted', 'BeamsPublishDelivered', 'BeamsUserDeleted'],
  // A delivered publish's notification is destroyed in the log: its copy here leaves the files too.
  destroys: ['BeamsPublishDelivered', 'BeamsUserDeleted'],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    if (event.type === 'BeamsUserDeleted') {
      if (!stream || stream.category !== BEAMS_USER_CATEGORY) return [];
      return (event.data.publish_ids ?? []).map((id) => ({ collection: BEAMS_PENDING_PUBLISHES, id: documentId(stream.instanceId, id) }));
    }
    if (!stream || stream.category !== BEAMS_PUBLISH_CATEGORY) return [];
    return [{ collection: BEAMS_PENDING_PUBLISHES, id: documentId(stream.instanceId, stream.id) }];
  },

  evolve(document, event) {
    if (event.type === 'BeamsUserDeleted') return document && { ...document, request: {} };
    if (event.type !== 'BeamsPublishAccepted') return null;
    const stream = parseStreamName(event.streamName)!;
    const { data } = event;
    return {
      _id: '',
      instance_id: stream.instanceId,
      publish_id: stream.id,
      target: data.target,
      request: data.request,
      accepted_at: data.accepted_at,
    } satisfies BeamsPendingPublishDocument;
  },
};

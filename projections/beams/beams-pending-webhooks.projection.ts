import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { BeamsPublishAccepted, BeamsPublishDelivered, BeamsPublishEvent } from '../../src/modules/beams/domain/beams.events';
import type { Document, ProjectionDefinition } from '../projection';
import { BEAMS_PUBLISH_CATEGORY } from '../../src/modules/beams/domain/beams.deciders';

export const BEAMS_PENDING_WEBHOOKS = 'beams_pending_webhooks';
/** `next_attempt_at` of a publish with nothing to send now (its end is not reached yet): after every real time. */
export const NOTHING_DUE = '9999-12-31T23:59:59.999Z';

/** One webhook still to be sent: its body is rebuilt from these fields, byte for byte, on every attempt. */
export interface PendingWebhook {
  readonly event_type: string;
  readonly event_id: string;
  readonly created_at: string;
  readonly payload: Record<string, unknown>;
  /** Attempts made so far. */
  readonly attempts: number;
}

export interface BeamsPendingWebhookDocument extends Document {
  readonly instance_id: string;
  readonly publish_id: string;
  readonly webhook_url: string;
  /** The id of the instance key the publish was made with: the webhooks are signed with its secret. */
  readonly key_id: string | null;
  readonly delivered: boolean;
  /** `interests` or `users`: names the finished webhook's event type. */
  readonly target_kind: string;
  /** In the order they are sent: the first is the one being tried. */
  readonly webhooks: readonly PendingWebhook[];
  /** When the first webhook is due (or `NOTHING_DUE`): what the sender's sweep selects on. */
  readonly next_attempt_at: string;
}

/**
 * The key points of a publish that has a `webhookUrl`, and the webhook each one sends
 * (Beams' wrapper: `{payload, metadata: {event_type, event_id, created_at, product}}`).
 * Event ids derive from the publish id, so a retry, or a resend after a restart, carries
 * the same id and the receiver can deduplicate.
 */
export const acceptedWebhook = (instanceId: string, publishId: string, data: BeamsPublishAccepted['data']): PendingWebhook => ({
  event_type: 'v1.PublishAccepted',
  event_id: `${publishId}.accepted`,
  created_at: data.accepted_at,
  payload: { instance_id: instanceId, publish_id: publishId, ...data.target },
  attempts: 0,
});

export const finishedWebhook = (instanceId: string, publishId: string, kind: string, data: BeamsPublishDelivered['data']): PendingWebhook => ({
  event_type: kind === 'users' ? 'v1.PublishToUsersAttempt' : 'v1.PublishToInterestsAttempt',
  event_id: `${publishId}.finished`,
  created_at: data.delivered_at,
  payload: {
    instance_id: instanceId,
    publish_id: publishId,
    devices: data.devices,
    delivered_to_gateway: data.delivered,
    gateway_failed: data.failed,
    devices_removed: data.removed,
  },
  attempts: 0,
});

const withQueue = (doc: BeamsPendingWebhookDocument, webhooks: readonly PendingWebhook[], dueAt?: string): BeamsPendingWebhookDocument | null => {
  if (webhooks.length === 0) return doc.delivered ? null : { ...doc, webhooks, next_attempt_at: NOTHING_DUE };
  return { ...doc, webhooks, next_attempt_at: dueAt ?? doc.next_attempt_at };
};

/**
 * The webhook sender's work list: a publish with a `webhookUrl` is here from its acceptance
 * until every webhook of its key points was delivered or given up, so webhooks pending at
 * a crash are resumed, with the attempts already made counted, after the restart.
 */
export const beamsPendingWebhooksProjection: ProjectionDefinition<BeamsPublishEvent, BeamsPendingWebhookDocument> = {
  name: 'beams_pending_webhooks',
  version: 1,
  collections: [{ name: BEAMS_PENDING_WEBHOOKS, indexes: [{ fields: ['instance_id'] }, { fields: ['next_attempt_at'] }] }],
  handles: ['BeamsPublishAccepted', 'BeamsPublishDelivered', 'BeamsPublishWebhookAttempted'],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    if (!stream || stream.category !== BEAMS_PUBLISH_CATEGORY) return [];
    if (event.type === 'BeamsPublishAccepted' && !event.data.webhook_url) return [];
    return [{ collection: BEAMS_PENDING_WEBHOOKS, id: documentId(stream.instanceId, stream.id) }];
  },

  evolve(doc, event) {
    const stream = parseStreamName(event.streamName)!;
    if (event.type === 'BeamsPublishAccepted') {
      const { data } = event;
      return {
        _id: '',
        instance_id: stream.instanceId,
        publish_id: stream.id,
        webhook_url: data.webhook_url!,
        key_id: event.metadata.actor?.key_id ?? null,
        delivered: false,
        webhooks: [acceptedWebhook(stream.instanceId, stream.id, data)],
        next_attempt_at: data.accepted_at,
        target_kind: data.target.kind,
      } satisfies BeamsPendingWebhookDocument;
    }
    if (doc === null) return null; // a publish without a webhook
    if (event.type === 'BeamsPublishDelivered') {
      const { data } = event;
      const finished = finishedWebhook(doc.instance_id, doc.publish_id, doc.target_kind, data);
      const webhooks = [...doc.webhooks, finished];
      return withQueue({ ...doc, delivered: true }, webhooks, doc.webhooks.length === 0 ? data.delivered_at : undefined);
    }
    const { data } = event;
    const [first, ...rest] = doc.webhooks;
    if (!first || first.event_type !== data.event_type) return doc;
    if (data.outcome === 'retrying') return withQueue(doc, [{ ...first, attempts: data.attempt }, ...rest], data.next_attempt_at!);
    return withQueue(doc, rest, event.recordedAt);
  },
};

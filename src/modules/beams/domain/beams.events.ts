import { DomainEvent } from '../../../shared/domain/event';

/** Who a publish goes to. */
export type PublishTarget = { kind: 'interests'; interests: string[] } | { kind: 'users'; users: string[] };

/**
 * A publish accepted with its `publishId`: the targets and the notification as sent (the
 * `apns` / `fcm` / `web` payloads and any other field), never the key's secret, only its id.
 * The notification is sealed in the log under the publish's data key, destroyed once the
 * publish is delivered (nothing reads it after) or its user deleted: it then reads as `{}`.
 */
export type BeamsPublishAccepted = DomainEvent<
  'BeamsPublishAccepted',
  { publish_id: string; target: PublishTarget; request: Record<string, unknown>; webhook_url: string | null; accepted_at: string }
>;

/**
 * `deleteUser`: the user's devices are to be forgotten (the device registry folds this). It
 * names the devices associated with the user and the publishes to the user still undelivered
 * when it was decided (absent in events written before): their push addresses and
 * notifications are destroyed with it.
 */
export type BeamsUserDeleted = DomainEvent<
  'BeamsUserDeleted',
  { user_id: string; deleted_at: string; device_ids?: string[]; publish_ids?: string[] }
>;

/** The publish was sent to every matching device (each device tried until delivered, given up on, or removed as gone). */
export type BeamsPublishDelivered = DomainEvent<
  'BeamsPublishDelivered',
  { devices: number; delivered: number; failed: number; removed: number; delivered_at: string }
>;

/**
 * One POST of a webhook to the publish's `webhookUrl` and what came of it: the answer's
 * status or the network error, and whether it is settled or tried again when. Never the
 * signature or the key.
 */
export type BeamsPublishWebhookAttempted = DomainEvent<
  'BeamsPublishWebhookAttempted',
  {
    event_type: string;
    event_id: string;
    attempt: number;
    status: number | null;
    error: string | null;
    outcome: 'delivered' | 'retrying' | 'given_up';
    next_attempt_at: string | null;
    attempted_at: string;
  }
>;

export type BeamsPublishEvent = BeamsPublishAccepted | BeamsPublishDelivered | BeamsPublishWebhookAttempted;
export type BeamsUserEvent = BeamsUserDeleted;

import { renderAttachment } from '../modules/attachments/render-attachment';
import { AttachmentLinks } from '../modules/attachments/links/attachment-links';
import { SentMessages } from '../modules/messages/sent-messages';
import { ChatkitWebhookLookups, OfflineNow } from '../modules/webhooks/deliver-webhooks/chatkit-webhook-lookups';
import type { WebhookContextAt } from '../modules/webhooks/deliver-webhooks/webhook-context';
import { WebhookDeactivation, WebhookDeliveryWorker } from '../modules/webhooks/deliver-webhooks/webhook-delivery-worker';
import { InstanceEpochs } from '../shared/application/write-path/instance-epochs';
import { StreamStates } from '../shared/application/write-path/stream-states';
import type { SecretBox } from '../shared/crypto/secret-box';
import { systemClock } from '../shared/domain/clock';
import type { EventStore } from '../shared/ports/event-store.port';
import type { ReadModelStore } from '../shared/ports/read-model-store.port';
import { OutgoingWebhooks } from '../shared/webhooks/outgoing-webhooks';
import { WebhookTargets } from '../shared/webhooks/webhook-targets';
import type { ParleyConfig } from '../config/config';
import type { Logger } from '../infrastructure/logger';

/*
 * The parts of Chatkit webhook delivery every deliverer shares: the request thread or a projector
 * worker (webhook-delivery.ts), and the embedded server's projector thread (worker-entry.ts),
 * which loads no Nest application.
 */

/** The settings a delivery worker reads, wherever it runs (the projector thread is sent them). */
export type WebhookDeliveryConfig = Pick<ParleyConfig, 'webhookAllowedHosts' | 'webhookRetryScheduleMs' | 'webhookDeliveryTimeoutMs' | 'projectionLeaseTtlMs'>;

export interface WebhookDeliveryParts {
  readonly config: WebhookDeliveryConfig;
  readonly logger: Logger;
  /** The log, opened as read (the sealing store). */
  readonly events: EventStore;
  /** Projections' logical names resolved to the serving versions (VersionedReadModels). */
  readonly readModels: ReadModelStore;
  readonly secretBox: SecretBox;
  readonly owner: string;
  readonly deactivate: WebhookDeactivation;
  readonly contextAt: WebhookContextAt;
}

/** A started delivery worker over `parts`: the one way every process (and the projector thread) delivers. */
export function deliverWebhooks(parts: WebhookDeliveryParts): WebhookDeliveryWorker {
  const { config, logger } = parts;
  const worker = new WebhookDeliveryWorker({
    events: parts.events,
    readModels: parts.readModels,
    deactivate: parts.deactivate,
    secretBox: parts.secretBox,
    outgoing: new OutgoingWebhooks(new WebhookTargets(config.webhookAllowedHosts)),
    owner: parts.owner,
    leaseMs: config.projectionLeaseTtlMs,
    retry: { scheduleMs: config.webhookRetryScheduleMs, timeoutMs: config.webhookDeliveryTimeoutMs },
    onError: (error, what) => logger.warn({ err: error }, what),
    contextAt: parts.contextAt,
  });
  worker.start();
  return worker;
}

/**
 * The Chatkit mapping's lookups where the log is read from `events`: a message's sender from its
 * room's timeline (read only: no write waits for projections here), presence from `offlineNow`,
 * attachments with links to `origin`.
 */
export function webhookContextAt(events: EventStore, secretBox: SecretBox, offlineNow: OfflineNow, origin: () => string): WebhookContextAt {
  const links = new AttachmentLinks(secretBox, systemClock);
  const lookups = new ChatkitWebhookLookups({
    events,
    sentMessages: new SentMessages(new StreamStates(events, new InstanceEpochs(events))),
    offlineNow,
    attachment: (instanceId, roomId, attachment) => ({ ...renderAttachment(links, origin(), instanceId, roomId, attachment) }),
  });
  return (event) => lookups.at(event.position);
}

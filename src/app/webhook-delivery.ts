import { HttpAdapterHost } from '@nestjs/core';
import { renderAttachment } from '../modules/attachments/attachment-resolver';
import { AttachmentLinks } from '../modules/attachments/links/attachment-links';
import { PublicOrigin } from '../modules/attachments/links/public-origin';
import { SentMessages } from '../modules/messages/sent-messages';
import { PresenceTracker } from '../modules/presence/presence-tracker';
import { ChatkitWebhookLookups } from '../modules/webhooks/deliver-webhooks/chatkit-webhook-lookups';
import { WebhookContextAt } from '../modules/webhooks/deliver-webhooks/webhook-context';
import { systemClock } from '../shared/domain/clock';
import { WebhookDeliveryWorker } from '../modules/webhooks/deliver-webhooks/webhook-delivery-worker';
import { VersionedReadModels } from '../shared/application/projection-runtime/versioned-read-models';
import { CommandPipeline } from '../shared/application/write-path/command-pipeline';
import { InstanceEpochs } from '../shared/application/write-path/instance-epochs';
import { OutgoingWebhooks } from '../shared/webhooks/outgoing-webhooks';
import { WebhookTargets } from '../shared/webhooks/webhook-targets';
import type { Runtime } from './runtime';

/**
 * Starts delivering Chatkit webhooks from this process: the embedded server and the projector
 * workers do (API processes beside workers and the CLIs do not). Outside Nest, since a
 * projector worker has no Nest application.
 */
export function startWebhookDelivery(runtime: Runtime, contextAt: WebhookContextAt = projectorContextAt(runtime)): WebhookDeliveryWorker {
  const { config, logger, stores } = runtime;
  const worker = new WebhookDeliveryWorker({
    events: stores.events,
    readModels: new VersionedReadModels(stores.readModels, runtime.versions),
    pipeline: new CommandPipeline(stores.events, runtime.projections, new InstanceEpochs(stores.events)),
    secretBox: runtime.secretBox,
    outgoing: new OutgoingWebhooks(new WebhookTargets(config.webhookAllowedHosts)),
    owner: runtime.leaseOwner,
    leaseMs: config.projectionLeaseTtlMs,
    retry: { scheduleMs: config.webhookRetryScheduleMs, timeoutMs: config.webhookDeliveryTimeoutMs },
    onError: (error, what) => logger.warn({ err: error }, what),
    contextAt,
  });
  worker.start();
  return worker;
}

/**
 * The Chatkit mapping's lookups in a projector worker, which has no Nest application: a presence
 * tracker of its own over the shared ephemeral bus (it answers as another API process would, and
 * registers no one), attachment links from PUBLIC_URL (or HOST and PORT).
 */
function projectorContextAt(runtime: Runtime): WebhookContextAt {
  const { config, stores } = runtime;
  const links = new AttachmentLinks(runtime.secretBox, systemClock);
  const origin = new PublicOrigin(config, new HttpAdapterHost());
  const lookups = new ChatkitWebhookLookups({
    events: stores.events,
    sentMessages: new SentMessages(new CommandPipeline(stores.events, runtime.projections, new InstanceEpochs(stores.events))),
    presence: new PresenceTracker(stores.ephemeral, null),
    attachment: (instanceId, roomId, attachment) => ({ ...renderAttachment(links, origin.fallback(), instanceId, roomId, attachment) }),
  });
  return (event) => lookups.at(event.position);
}

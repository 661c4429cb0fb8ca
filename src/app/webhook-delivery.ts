import { HttpAdapterHost } from '@nestjs/core';
import { PublicOrigin } from '../modules/attachments/links/public-origin';
import { PresenceTracker } from '../modules/presence/presence-tracker';
import { offlineNowFrom } from '../modules/webhooks/deliver-webhooks/chatkit-webhook-lookups';
import { WebhookContextAt } from '../modules/webhooks/deliver-webhooks/webhook-context';
import { deactivateWebhook, WebhookDeliveryWorker } from '../modules/webhooks/deliver-webhooks/webhook-delivery-worker';
import { VersionedReadModels } from '../shared/application/projection-runtime/versioned-read-models';
import { CommandPipeline } from '../shared/application/write-path/command-pipeline';
import { InstanceEpochs } from '../shared/application/write-path/instance-epochs';
import { ProjectorThread } from './projector-thread/projector-thread';
import type { Runtime } from './runtime';
import { deliverWebhooks, webhookContextAt } from './webhook-delivery-parts';

/**
 * Starts delivering Chatkit webhooks on this thread: the projector workers do, and the embedded
 * server without its projector thread (with it, the thread delivers: `ProjectorThread.deliverWebhooks`).
 * API processes beside workers and the CLIs do not. Outside Nest, since a projector worker has no
 * Nest application.
 */
export function startWebhookDelivery(runtime: Runtime, contextAt: WebhookContextAt = projectorContextAt(runtime)): WebhookDeliveryWorker {
  const { config, logger, stores } = runtime;
  return deliverWebhooks({
    config,
    logger,
    events: stores.events,
    readModels: new VersionedReadModels(stores.readModels, runtime.versions),
    secretBox: runtime.secretBox,
    owner: runtime.leaseOwner,
    deactivate: deactivateWebhook(new CommandPipeline(stores.events, runtime.projections, new InstanceEpochs(stores.events))),
    contextAt,
  });
}

/**
 * The lookups in a projector worker, which has no Nest application: a presence tracker of its
 * own over the shared ephemeral bus (it answers as another API process would, and registers no
 * one), attachment links from PUBLIC_URL (or HOST and PORT).
 */
function projectorContextAt(runtime: Runtime): WebhookContextAt {
  const origin = new PublicOrigin(runtime.config, new HttpAdapterHost());
  return webhookContextAt(runtime.stores.events, runtime.secretBox, offlineNowFrom(new PresenceTracker(runtime.stores.ephemeral, null)), () => origin.fallback());
}

/** What the embedded server's API offers its deliveries: its lookups, its presence tracker, where it is reached. */
export interface EmbeddedWebhookApi {
  readonly contextAt: WebhookContextAt;
  readonly presence: PresenceTracker;
  /** The origin attachment links in payloads point to. */
  readonly origin: string;
}

/**
 * The embedded server's deliveries, once it listens: on its projector thread when it has one
 * (what costs a send nothing on the request thread), else on this thread with
 * the API's lookups. Either way the lease and checkpoints are the same, so a restart with the
 * other setting resumes where the last one stopped.
 */
export function startEmbeddedWebhookDelivery(runtime: Runtime, api: EmbeddedWebhookApi): { stop(): Promise<void> } {
  if (!(runtime.runner instanceof ProjectorThread)) return startWebhookDelivery(runtime, api.contextAt);
  const { stores } = runtime;
  runtime.runner.deliverWebhooks({
    origin: api.origin,
    offlineNow: offlineNowFrom(api.presence),
    deactivate: deactivateWebhook(new CommandPipeline(stores.events, runtime.projections, new InstanceEpochs(stores.events))),
  });
  const thread = runtime.runner;
  return { stop: () => thread.stopWebhooks() };
}

import { noLookups, WebhookContextAt } from '../modules/webhooks/deliver-webhooks/webhook-context';
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
export function startWebhookDelivery(runtime: Runtime, contextAt: WebhookContextAt = noLookups): WebhookDeliveryWorker {
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

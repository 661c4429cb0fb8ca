import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { PeriodicSweep } from '../../../shared/application/operations/periodic-sweep';
import { underLease } from '../../../shared/application/operations/under-lease';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import type { SecretBox } from '../../../shared/crypto/secret-box';
import { fold } from '../../../shared/domain/decider';
import { messageOf } from '../../../shared/domain/errors';
import { LogPosition, RecordedEvent } from '../../../shared/domain/event';
import { parseStreamName } from '../../../shared/domain/streams';
import type { EventStore } from '../../../shared/ports/event-store.port';
import { LeaseLostError, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import type { OutgoingWebhooks } from '../../../shared/webhooks/outgoing-webhooks';
import { WEBHOOKS, WebhookDocument } from '../../../../projections/webhooks/webhooks.projection';
import { chatkitWebhookEventsOf, WEBHOOK_SOURCE_EVENT_TYPES } from '../domain/chatkit-webhook-events';
import { WebhookCommand, webhookDecider, WebhookState, webhookStream } from '../domain/webhook.decider';
import { WebhookEvent } from '../domain/webhook.events';
import { CheckpointWriter } from './checkpoint-writer';
import { deliverWithRetries, RetryPolicy } from './deliver-with-retries';
import { pruneDeliveries, redeliveryCheckpoint, redeliveryCount, WEBHOOK_DELIVERIES, WEBHOOK_DELIVERIES_COLLECTION, WebhookDeliveryDocument, webhookCheckpoint, webhookLease } from './webhook-deliveries';
import type { WebhookContextAt } from './webhook-context';
import { webhookRequest } from './webhook-request';

/** How often a process looks for webhooks to deliver (new, changed, or left by a dead worker). */
export const WEBHOOK_SWEEP_INTERVAL_MS = 1_000;
/** The most active webhooks one sweep reads (all instances). */
const MAX_ACTIVE_WEBHOOKS = 10_000;

export interface WebhookDeliveryOptions {
  readonly events: EventStore;
  /** Queries see projections' logical names (VersionedReadModels); checkpoints, leases and the delivery log pass through. */
  readonly readModels: ReadModelStore;
  /** Deactivates a webhook whose every attempt of an event failed (`deactivateWebhook`, or the request thread's by message). */
  readonly deactivate: WebhookDeactivation;
  readonly secretBox: SecretBox;
  readonly outgoing: OutgoingWebhooks;
  readonly owner: string;
  readonly leaseMs: number;
  readonly retry: RetryPolicy;
  readonly onError: (error: unknown, what: string) => void;
  /** The lookups the mapping gets for each event delivered. */
  readonly contextAt: WebhookContextAt;
  readonly now?: () => Date;
}

interface Running {
  readonly revision: number;
  readonly stop: AbortController;
  readonly done: Promise<unknown>;
}

/**
 * Delivers Chatkit webhooks from the log, at least once and in log order per webhook.
 *
 * One log subscription per webhook, not one shared: each webhook reads from its own checkpoint,
 * so a receiver that is down for an hour is an hour behind while the others stay live, a replay
 * moves one webhook back alone, and nothing has to buffer events for a slow receiver (the log is
 * the queue). The cost is one filtered read of new events per active webhook, which the cap on
 * webhooks per instance bounds; writes never wait for any of it.
 *
 * A webhook is delivered under its lease (one process at a time, across API processes and
 * projector workers; a dead holder's is taken over once it expires). Its checkpoint moves, with
 * the delivery log, in one batch fenced by that lease, only after the receiver's 2xx: a crash
 * before it delivers the event again, with the same id. When every attempt of an event fails,
 * the webhook is deactivated (an event on its stream) and stops there; reactivated, it resumes
 * with that event.
 */
export class WebhookDeliveryWorker {
  private readonly running = new Map<string, Running>();
  private readonly sweeper: PeriodicSweep;
  private collectionsReady = false;

  constructor(private readonly options: WebhookDeliveryOptions) {
    this.sweeper = new PeriodicSweep(() => this.sweep(), WEBHOOK_SWEEP_INTERVAL_MS, (error) => options.onError(error, 'looking for webhooks to deliver failed; retrying shortly'));
  }

  start(): void {
    this.sweeper.start();
  }

  async stop(): Promise<void> {
    await this.sweeper.stop();
    for (const run of this.running.values()) run.stop.abort(new Error('the process is stopping'));
    await Promise.allSettled([...this.running.values()].map((run) => run.done));
  }

  private async sweep(): Promise<void> {
    if (!this.collectionsReady) {
      await this.options.readModels.ensureCollections([WEBHOOK_DELIVERIES_COLLECTION]);
      this.collectionsReady = true;
    }
    const active = await this.options.readModels.find<WebhookDocument>(WEBHOOKS, { where: { active: true }, limit: MAX_ACTIVE_WEBHOOKS });
    const wanted = new Map(active.map((doc) => [webhookLease(doc.instance_id, doc.id), doc]));
    for (const [key, run] of this.running) {
      const doc = wanted.get(key);
      if (!doc || doc.revision !== run.revision) run.stop.abort(new Error('the webhook changed'));
    }
    for (const [key, doc] of wanted) {
      if (this.running.has(key) || this.sweeper.stopped) continue;
      const stop = new AbortController();
      const done = underLease(this.options.readModels, key, this.options.owner, this.options.leaseMs, (lost) =>
        this.deliver(doc, AbortSignal.any([stop.signal, lost])),
      )
        .catch((error: unknown) => {
          if (!stop.signal.aborted && !(error instanceof LeaseLostError)) this.options.onError(error, `deliveries to webhook ${doc.id} of ${doc.instance_id} stopped; the next sweep resumes them`);
        })
        .finally(() => {
          if (this.running.get(key)?.stop === stop) this.running.delete(key);
        });
      this.running.set(key, { revision: doc.revision, stop, done });
    }
  }

  /** Delivers the webhook's events from its checkpoint on, until `stop` aborts or every attempt of one fails. */
  private async deliver(doc: WebhookDocument, stop: AbortSignal): Promise<void> {
    const { events, readModels, owner } = this.options;
    const stream = await events.readStream(webhookStream(doc.instance_id, doc.id));
    const state = fold(webhookDecider, stream as RecordedEvent<WebhookEvent>[]);
    if (state.status !== 'live' || !state.active || !state.settings) return;
    const webhook = {
      id: doc.id,
      secret: this.options.secretBox.open(state.settings.secret),
      customData: state.settings.custom_data,
      standardWebhooks: state.settings.standard_webhooks,
    };
    const wantedTypes = new Set<string>(state.settings.event_types);
    const checkpoint = webhookCheckpoint(doc.instance_id, doc.id, state.replay);
    const lease = webhookLease(doc.instance_id, doc.id);
    // A new webhook carries what happened after it was created; a replay, what came after its position.
    const start: LogPosition | null = (await readModels.getCheckpoint(checkpoint)) ?? (state.replay > 0 ? state.replayFrom : stream[0].position);
    const subscription = events.subscribeToAll({ after: start, filter: { eventTypes: WEBHOOK_SOURCE_EVENT_TYPES } });
    const close = () => void subscription.close();
    stop.addEventListener('abort', close, { once: true });
    // One kept connection per webhook: a round trip per event rather than a connection per event.
    const agent = new (state.settings.url.startsWith('https:') ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: 1 });
    const progress = new CheckpointWriter(readModels, checkpoint, { name: lease, owner }, (error) => {
      if (!(error instanceof LeaseLostError)) this.options.onError(error, `the checkpoint of webhook ${doc.id} of ${doc.instance_id} could not be written; its deliveries stop and resume from the last one written`);
      this.running.get(lease)?.stop.abort(error);
    }, () => pruneDeliveries(readModels, doc.instance_id, doc.id));
    let previous = start;
    try {
      await this.redeliver(doc, state, webhook, agent, stop);
      for await (const event of subscription) {
        if (stop.aborted || progress.failed) break;
        const after = previous;
        previous = event.position;
        const carried = parseStreamName(event.streamName)?.instanceId === doc.instance_id ? await chatkitWebhookEventsOf(event, this.options.contextAt(event), wantedTypes) : [];
        if (carried.length === 0) {
          progress.passed(event.position, []);
          continue;
        }
        const deliveries: WebhookDeliveryDocument[] = [];
        for (const carriedEvent of carried) {
          const outcome = await deliverWithRetries(this.options.outgoing, state.settings.url, (at) => webhookRequest(webhook, carriedEvent, at), this.options.retry, stop, agent);
          const record: WebhookDeliveryDocument = {
            _id: randomUUID(),
            instance_id: doc.instance_id,
            webhook_id: doc.id,
            event_id: carriedEvent.id,
            event_type: carriedEvent.type,
            position: event.position,
            after_position: after,
            status: outcome.delivered ? 'delivered' : 'failed',
            attempts: outcome.attempts,
            response_code: outcome.responseCode,
            ...(outcome.error !== undefined && { error: outcome.error }),
            delivered_at: this.now().toISOString(),
          };
          if (!outcome.delivered) {
            // The failure is logged; the checkpoint stays before the event: reactivated, the webhook resumes with it.
            await progress.logOnly([...deliveries, record]);
            await this.deactivate(doc, record);
            return;
          }
          deliveries.push(record);
        }
        progress.passed(event.position, deliveries);
      }
    } finally {
      stop.removeEventListener('abort', close);
      await progress.flush().catch(() => undefined);
      agent.destroy();
      await subscription.close();
    }
  }

  /** Sends the redeliveries requested since the last one sent, each once, before the webhook's deliveries go on. */
  private async redeliver(doc: WebhookDocument, state: WebhookState, webhook: Parameters<typeof webhookRequest>[0], agent: HttpAgent, stop: AbortSignal): Promise<void> {
    const { events, readModels, owner } = this.options;
    const checkpoint = redeliveryCheckpoint(doc.instance_id, doc.id);
    const done = Number((await readModels.getCheckpoint(checkpoint)) ?? 0);
    for (const request of state.pendingRedeliveries.filter((r) => r.redelivery > done)) {
      stop.throwIfAborted();
      const [event] = await events.readAll({ after: request.after_position, maxCount: 1, filter: { eventTypes: WEBHOOK_SOURCE_EVENT_TYPES } });
      const carried = event?.position === request.position ? (await chatkitWebhookEventsOf(event, this.options.contextAt(event))).find((e) => e.id === request.event_id) : undefined;
      const outcome = carried
        ? await deliverWithRetries(this.options.outgoing, state.settings!.url, (at) => webhookRequest(webhook, carried, at), this.options.retry, stop, agent)
        : {
            delivered: false,
            attempts: 0,
            responseCode: null,
            // Presence has no history: who was offline for a message is told only within a minute of its send.
            error: 'the log no longer gives this event (its instance was wiped, or it is a v1.message_sent_user_offline over a minute after its message)',
          };
      const record: WebhookDeliveryDocument = {
        _id: randomUUID(),
        instance_id: doc.instance_id,
        webhook_id: doc.id,
        event_id: request.event_id,
        event_type: carried?.type ?? '',
        position: request.position,
        after_position: request.after_position,
        redelivery: request.redelivery,
        status: outcome.delivered ? 'delivered' : 'failed',
        attempts: outcome.attempts,
        response_code: outcome.responseCode,
        ...(outcome.error !== undefined && { error: outcome.error }),
        delivered_at: this.now().toISOString(),
      };
      await readModels.applyBatch(
        [{ collection: WEBHOOK_DELIVERIES, kind: 'put', document: record, position: record.position }],
        { [checkpoint]: redeliveryCount(request.redelivery) },
        [{ name: webhookLease(doc.instance_id, doc.id), owner }],
      );
    }
  }

  private async deactivate(doc: WebhookDocument, failed: WebhookDeliveryDocument): Promise<void> {
    await this.options.deactivate(doc.instance_id, doc.id, {
      event_id: failed.event_id,
      event_type: failed.event_type,
      attempts: failed.attempts,
      response_code: failed.response_code,
      ...(failed.error !== undefined && { error: failed.error }),
    });
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }
}

/** What a webhook's deactivation records of the event whose every attempt failed. */
export type WebhookFailure = Extract<WebhookCommand, { type: 'DeactivateWebhook' }>['failure'];
export type WebhookDeactivation = (instanceId: string, webhookId: string, failure: WebhookFailure) => Promise<void>;

/** Deactivates a webhook through the log (an event on its stream), as the delivery worker does when an event's every attempt failed. */
export function deactivateWebhook(pipeline: CommandPipeline, now: () => Date = () => new Date()): WebhookDeactivation {
  return async (instanceId, webhookId, failure) => {
    const at = now().toISOString();
    await pipeline.run(
      webhookStream(instanceId, webhookId),
      webhookDecider,
      { type: 'DeactivateWebhook', failure, now: at },
      { instance_id: instanceId, actor: { key_id: 'webhook-delivery' }, occurred_at: at },
      { awaitProjections: [] },
    );
  };
}

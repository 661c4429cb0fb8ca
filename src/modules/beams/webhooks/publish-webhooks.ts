import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { PeriodicSweep } from '../../../shared/application/operations/periodic-sweep';
import { CLOCK, LEASE_OWNER } from '../../../shared/application/tokens';
import { underLease } from '../../../shared/application/operations/under-lease';
import { Clock } from '../../../shared/domain/clock';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../../projections/projection';
import {
  BEAMS_PENDING_WEBHOOKS,
  BeamsPendingWebhookDocument,
  beamsPendingWebhooksProjection,
  PendingWebhook,
} from '../../../../projections/beams/beams-pending-webhooks.projection';
import { KeyRing } from '../../instances/authentication/key-ring';
import { BeamsPublishWebhookAttempted } from '../domain/beams.events';
import { beamsPublishDecider, beamsPublishStream } from '../domain/beams.deciders';
import { WEBHOOK_SIGNATURE_HEADER, webhookSignature } from './webhook-signature';
import { messageOf } from '../../../shared/domain/errors';
import { OutgoingWebhooks, WebhookTargetRefused } from '../../../shared/webhooks/outgoing-webhooks';

/** How often every API process looks for webhooks due (its own, others', those a crash left). */
export const WEBHOOK_SWEEP_INTERVAL_MS = 1_000;
/** Attempts per webhook before it is given up (any answer but 2xx, and network errors, are retried). */
export const WEBHOOK_ATTEMPTS = 6;
const BATCH = 50;
const POST_TIMEOUT_MS = 10_000;
const LEASE_MS = 30_000;

/** The wait before attempt `attempt + 1`: 1 s, 2 s, 4 s … capped at 5 min. */
export const webhookRetryDelayMs = (attempt: number): number => Math.min(300_000, 1_000 * 2 ** (attempt - 1));

/** The body of a webhook, in the wrapper the Beams webhook docs show; the same bytes on every attempt. */
export const webhookBody = (webhook: PendingWebhook): string =>
  JSON.stringify({
    payload: webhook.payload,
    metadata: { created_at: webhook.created_at, event_type: webhook.event_type, event_id: webhook.event_id, product: 'beams' },
    custom_data: {},
  });

/**
 * Sends the webhooks of publishes that have a `webhookUrl`: `v1.PublishAccepted` when the
 * publish is accepted, then `v1.PublishToInterestsAttempt` / `v1.PublishToUsersAttempt` with
 * the delivery counts when it is delivered, in that order. The work list is the
 * pending-webhooks read model, so the publish call never waits and a webhook pending at a
 * crash is resumed after the restart. Each POST is signed (`Webhook-Signature`, hex
 * HMAC-SHA1 of the body keyed by the secret of the key the publish was made with), sent
 * through OutgoingWebhooks (public addresses only, unless WEBHOOK_ALLOWED_HOSTS allows more)
 * and recorded as a `BeamsPublishWebhookAttempted` event on the publish's stream.
 */
@Injectable()
export class PublishWebhooks implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('beams-webhooks');
  private readonly running = new Map<string, Promise<void>>();
  private readonly sweeper = new PeriodicSweep(() => this.sweepDue(), WEBHOOK_SWEEP_INTERVAL_MS, (error) =>
    this.logger.warn(`looking for webhooks due failed; retrying in ${WEBHOOK_SWEEP_INTERVAL_MS} ms: ${messageOf(error)}`),
  );
  private readonly stop = new AbortController();
  /** This process as the owner of webhook leases (stable for the embedded server, see LEASE_OWNER). */
  private readonly owner: string;

  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly keyRing: KeyRing,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LEASE_OWNER) leaseOwner: string,
    private readonly webhooks: OutgoingWebhooks,
  ) {
    this.owner = `beams-webhooks@${leaseOwner}`;
  }

  onApplicationBootstrap(): void {
    this.sweeper.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled([this.sweeper.stop(), ...this.running.values()]);
  }

  private async sweepDue(): Promise<void> {
    const due = await this.readModels.find<BeamsPendingWebhookDocument>(BEAMS_PENDING_WEBHOOKS, {
      where: { next_attempt_at: { lte: this.clock.now().toISOString() } },
      sort: [{ field: 'next_attempt_at' }],
      limit: BATCH,
    });
    for (const publish of due) this.start(publish);
  }

  private start(publish: BeamsPendingWebhookDocument): void {
    const key = publish._id;
    if (this.running.has(key) || this.stop.signal.aborted || publish.webhooks.length === 0) return;
    const run = underLease(this.readModels, `beams_webhook:${key}`, this.owner, LEASE_MS, () => this.attempt(publish))
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.warn(`webhook of publish ${publish.publish_id} of ${publish.instance_id} stays pending: ${messageOf(error)}`),
      )
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  /** One attempt at the publish's first pending webhook, recorded whatever came of it. */
  private async attempt(publish: BeamsPendingWebhookDocument): Promise<void> {
    const webhook = publish.webhooks[0];
    const attempt = webhook.attempts + 1;
    const secret = publish.key_id === null ? undefined : (await this.keyRing.instance(publish.instance_id))?.keys.get(publish.key_id);
    let status: number | null = null;
    let error: string | null = null;
    /** A webhook that can never be sent: settled as given up at once rather than retried. */
    let hopeless = false;
    if (secret === undefined) {
      // Without the key the receiver checks against, a webhook cannot be signed.
      error = `the key "${publish.key_id}" the publish was made with is no longer enabled`;
      hopeless = true;
    } else {
      const body = webhookBody(webhook);
      try {
        status = await this.webhooks.post(publish.webhook_url, {
          headers: {
            'content-type': 'application/json',
            'user-agent': 'pusher-webhooks',
            'webhook-event-type': webhook.event_type,
            'webhook-retry-attempt': String(attempt - 1),
            [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(body, secret),
          },
          body,
          signal: AbortSignal.any([AbortSignal.timeout(POST_TIMEOUT_MS), this.stop.signal]),
        });
      } catch (e) {
        if (this.stop.signal.aborted) return; // stopping: the attempt is made again after the restart
        error = messageOf(e);
        // Refused by WEBHOOK_ALLOWED_HOSTS: the same URL is refused the same way on every retry.
        hopeless = e instanceof WebhookTargetRefused;
      }
    }
    const ok = status !== null && status >= 200 && status < 300;
    const last = hopeless || attempt >= WEBHOOK_ATTEMPTS;
    const now = this.clock.now();
    const data: BeamsPublishWebhookAttempted['data'] = {
      event_type: webhook.event_type,
      event_id: webhook.event_id,
      attempt,
      status,
      error,
      outcome: ok ? 'delivered' : last ? 'given_up' : 'retrying',
      next_attempt_at: ok || last ? null : new Date(now.getTime() + webhookRetryDelayMs(attempt)).toISOString(),
      attempted_at: now.toISOString(),
    };
    if (!ok) this.logger.warn(`webhook ${webhook.event_type} of publish ${publish.publish_id} attempt ${attempt}: ${status ?? error}; ${data.outcome}`);
    await this.pipeline.run(
      beamsPublishStream(publish.instance_id, publish.publish_id),
      beamsPublishDecider,
      { type: 'RecordWebhookAttempt', attempt: data },
      { instance_id: publish.instance_id, actor: { key_id: 'beams_webhooks' }, occurred_at: now.toISOString() },
      // Answered once the work list shows the attempt, so the next sweep does not send it again.
      { awaitProjections: [checkpointName(beamsPendingWebhooksProjection)] },
    );
  }
}

import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import webPush, { WebPushError } from 'web-push';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { Backoff } from '../../../shared/application/backoff';
import { PeriodicSweep } from '../../../shared/application/periodic-sweep';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { SECRET_BOX, SecretBox, SealedSecret } from '../../../shared/crypto/secret-box';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../../projections/projection';
import {
  BEAMS_DEVICE_INTERESTS,
  BEAMS_DEVICES,
  BeamsDeviceDocument,
  beamsDeviceDocumentId,
  BeamsDeviceInterestDocument,
} from '../../../../projections/beams/beams-devices.projection';
import {
  BEAMS_PENDING_PUBLISHES,
  BeamsPendingPublishDocument,
  beamsPendingPublishesProjection,
} from '../../../../projections/beams/beams-pending-publishes.projection';
import { beamsPublishDecider, beamsPublishStream } from '../domain/beams.deciders';
import { Devices } from '../devices/devices';
import type { WebPushSubscription } from '../devices/web-push-subscription';
import { vapidKeys, VapidKeys } from './vapid-keys';
import { webPushPayload } from './web-push-payload';

/** How often every API process looks for publishes not yet delivered (its own, others', those a crash left). */
export const DELIVERY_SWEEP_INTERVAL_MS = 1_000;
const BATCH = 50;
/** Attempts per device before it is counted as failed (5xx, 429, network errors are retried). */
const ATTEMPTS = 5;
const PUSH_TIMEOUT_MS = 10_000;
/** How long a push service keeps a message for an offline browser. */
const TTL_SECONDS = 4 * 7 * 24 * 3600;
/** Pushes in flight per publish. */
const CONCURRENCY = 16;
/**
 * How long a publish's delivery lease lasts unrenewed (it is renewed while the delivery runs):
 * how soon another process, or this one restarted after a crash, takes a delivery over.
 */
const DELIVERY_LEASE_MS = 30_000;

type Outcome = 'delivered' | 'failed' | 'removed';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Delivers accepted publishes to Web Push devices. The work list is the pending-publishes
 * read model (fed from the log by the projector with its checkpoint), so the publish call
 * never waits for delivery and a publish acknowledged before a crash is delivered after the
 * restart. Each device gets an encrypted push (aes128gcm, VAPID) through web-push, retried
 * with backoff; a 404/410 from the push service deletes the device. Delivery is at least
 * once: a crash between the pushes and `BeamsPublishDelivered` sends them again. A lease per
 * publish keeps two processes from delivering the same publish at once.
 */
@Injectable()
export class WebPushDelivery implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('beams-delivery');
  private readonly running = new Map<string, Promise<void>>();
  private readonly vapid: VapidKeys;
  private readonly sweeper = new PeriodicSweep(() => this.sweepAll(), DELIVERY_SWEEP_INTERVAL_MS, (error) =>
    this.logger.warn(`looking for pending publishes failed; retrying in ${DELIVERY_SWEEP_INTERVAL_MS} ms: ${messageOf(error)}`),
  );
  private readonly stop = new AbortController();
  /** This process, as the owner of delivery leases. */
  private readonly owner = `beams-delivery-${randomUUID()}`;

  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly devices: Devices,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(CONFIG) config: ParleyConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.vapid = vapidKeys(config, box);
  }

  /** The key browsers subscribe with (`applicationServerKey`). */
  get vapidPublicKey(): string {
    return this.vapid.publicKey;
  }

  onApplicationBootstrap(): void {
    this.sweeper.start();
  }

  async onModuleDestroy(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled([this.sweeper.stop(), ...this.running.values()]);
  }

  /** One pass over the pending publishes; a pass already running is joined rather than doubled. */
  sweep(): Promise<void> {
    return this.sweeper.run();
  }

  private async sweepAll(): Promise<void> {
    const pending = await this.readModels.find<BeamsPendingPublishDocument>(BEAMS_PENDING_PUBLISHES, {
      sort: [{ field: 'accepted_at' }],
      limit: BATCH,
    });
    for (const publish of pending) this.start(publish);
  }

  /** Delivers a publish unless this process already does; a failure leaves it pending for a later sweep. */
  private start(publish: BeamsPendingPublishDocument): void {
    const key = publish._id;
    if (this.running.has(key) || this.stop.signal.aborted) return;
    const lease = `beams_delivery:${key}`;
    const run = this.readModels
      .acquireLease(lease, this.owner, DELIVERY_LEASE_MS)
      .then(async (held) => {
        if (!held) return; // another process delivers it
        const renewal = setInterval(() => void this.readModels.acquireLease(lease, this.owner, DELIVERY_LEASE_MS).catch(() => undefined), DELIVERY_LEASE_MS / 3);
        try {
          await this.deliver(publish);
        } finally {
          clearInterval(renewal);
          await this.readModels.releaseLease(lease, this.owner);
        }
      })
      .catch((error: unknown) =>
        this.logger.warn(`publish ${publish.publish_id} of ${publish.instance_id} stays pending, retried by a later sweep: ${messageOf(error)}`),
      )
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  private async deliver(publish: BeamsPendingPublishDocument): Promise<void> {
    const { instance_id: instanceId, publish_id: publishId } = publish;
    const stream = beamsPublishStream(instanceId, publishId);
    // Another process may have finished it since the read model was read.
    if ((await this.pipeline.load(stream, beamsPublishDecider)).state.delivered) return;
    const payload = webPushPayload(instanceId, publishId, publish.request);
    const devices = payload === null ? [] : await this.devicesFor(publish);
    const outcomes: Outcome[] = [];
    let next = 0;
    const worker = async () => {
      while (next < devices.length && !this.stop.signal.aborted) {
        const device = devices[next++];
        outcomes.push(await this.pushTo(instanceId, device, payload!));
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, devices.length) }, worker));
    if (this.stop.signal.aborted) return; // unfinished: the next start delivers it
    const count = (o: Outcome) => outcomes.filter((x) => x === o).length;
    await this.pipeline.run(
      stream,
      beamsPublishDecider,
      {
        type: 'RecordDelivery',
        devices: devices.length,
        delivered: count('delivered'),
        failed: count('failed'),
        removed: count('removed'),
        now: this.clock.now().toISOString(),
      },
      { instance_id: instanceId, actor: { key_id: 'beams_delivery' }, occurred_at: this.clock.now().toISOString() },
      // Answered once the publish left the work list, so the next sweep does not deliver it again.
      { awaitProjections: [checkpointName(beamsPendingPublishesProjection)] },
    );
  }

  /** Devices holding any of the publish's interests, or associated with any of its users. */
  private async devicesFor(publish: BeamsPendingPublishDocument): Promise<BeamsDeviceDocument[]> {
    if (publish.target.kind === 'users') {
      return this.readModels.find<BeamsDeviceDocument>(BEAMS_DEVICES, {
        where: { instance_id: publish.instance_id, user_id: { in: publish.target.users } },
      });
    }
    const rows = await this.readModels.find<BeamsDeviceInterestDocument>(BEAMS_DEVICE_INTERESTS, {
      where: { instance_id: publish.instance_id, interest: { in: publish.target.interests } },
    });
    const ids = [...new Set(rows.map((r) => r.device_id))].map((id) => beamsDeviceDocumentId(publish.instance_id, id));
    return ids.length === 0 ? [] : this.readModels.getMany<BeamsDeviceDocument>(BEAMS_DEVICES, ids);
  }

  private async pushTo(instanceId: string, device: BeamsDeviceDocument, payload: string): Promise<Outcome> {
    let subscription: WebPushSubscription;
    try {
      subscription = JSON.parse(this.box.open(device.subscription as SealedSecret)) as WebPushSubscription;
    } catch (error) {
      // Sealed under another master key: no retry can open it.
      this.logger.warn(`device ${device.device_id} of ${instanceId} skipped: its subscription cannot be opened (${messageOf(error)})`);
      return 'failed';
    }
    const backoff = new Backoff(500, 30_000);
    for (let attempt = 1; ; attempt++) {
      try {
        await webPush.sendNotification(subscription, payload, {
          vapidDetails: this.vapid,
          TTL: TTL_SECONDS,
          contentEncoding: 'aes128gcm',
          timeout: PUSH_TIMEOUT_MS,
        });
        return 'delivered';
      } catch (error) {
        const status = error instanceof WebPushError ? error.statusCode : undefined;
        if (status === 404 || status === 410) {
          await this.devices.delete(instanceId, device.device_id, 'push_service_gone', this.clock.now());
          this.logger.log(`device ${device.device_id} of ${instanceId} removed: its push service answered ${status}`);
          return 'removed';
        }
        const retriable = status === undefined || status === 429 || status >= 500;
        if (!retriable || attempt >= ATTEMPTS || this.stop.signal.aborted) {
          this.logger.warn(`push to device ${device.device_id} of ${instanceId} failed (${status ?? messageOf(error)}); giving up after ${attempt} attempts`);
          return 'failed';
        }
        await sleep(backoff.next(), undefined, { signal: this.stop.signal }).catch(() => undefined);
      }
    }
  }
}

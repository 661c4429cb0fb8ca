import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Backoff } from '../../../shared/application/operations/backoff';
import { PeriodicSweep } from '../../../shared/application/operations/periodic-sweep';
import { underLease } from '../../../shared/application/operations/under-lease';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK, LEASE_OWNER } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { SECRET_BOX, SecretBox } from '../../../shared/crypto/secret-box';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../../projections/projection';
import { documentId } from '../../../shared/domain/streams';
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
import type { BeamsPlatform } from '../domain/beams-device.events';
import { PUSH_PROVIDERS, PushProvider, PushResult } from './push-provider';
import { messageOf } from '../../../shared/domain/errors';

/** How often every API process looks for publishes not yet delivered (its own, others', those a crash left). */
export const DELIVERY_SWEEP_INTERVAL_MS = 1_000;
/** Publishes this process delivers at once; the rest wait in the work list for a free slot. */
const PUBLISHES_IN_FLIGHT = 50;
/** Attempts per device before it is counted as failed (5xx, 429, network errors are retried). */
const ATTEMPTS = 5;
/** Pushes in flight per publish. */
const CONCURRENCY = 50;
/**
 * How long a publish's delivery lease lasts unrenewed (it is renewed while the delivery runs):
 * how soon another process, or this one restarted after a crash, takes a delivery over.
 */
const DELIVERY_LEASE_MS = 30_000;

type Outcome = 'delivered' | 'failed' | 'removed';

/**
 * Delivers accepted publishes to devices through the push provider of each device's platform
 * (Web Push, APNs, FCM). The work list is the pending-publishes read model (fed from the log
 * by the projector with its checkpoint), so the publish call never waits for delivery and a
 * publish acknowledged before a crash is delivered after the restart. Each push is retried
 * with backoff when the provider says so; an address the provider reports invalid deletes the
 * device. Delivery is at least once: a crash between the pushes and `BeamsPublishDelivered`
 * sends them again. A lease per publish keeps two processes from delivering the same publish at once.
 */
@Injectable()
export class BeamsDelivery implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('beams-delivery');
  private readonly running = new Map<string, Promise<void>>();
  private readonly providers: ReadonlyMap<BeamsPlatform, PushProvider>;
  /** Platforms whose devices were skipped for want of credentials (warned once each). */
  private readonly warnedUnconfigured = new Set<BeamsPlatform>();
  private readonly sweeper = new PeriodicSweep(() => this.sweepAll(), DELIVERY_SWEEP_INTERVAL_MS, (error) =>
    this.logger.warn(`looking for pending publishes failed; retrying in ${DELIVERY_SWEEP_INTERVAL_MS} ms: ${messageOf(error)}`),
  );
  private readonly stop = new AbortController();
  /** This process as the owner of delivery leases (stable for the embedded server, see LEASE_OWNER). */
  private readonly owner: string;
  /** The last sweep left publishes waiting for a free slot: a finished delivery sweeps again at once. */
  private moreWaiting = false;

  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly devices: Devices,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LEASE_OWNER) leaseOwner: string,
    @Inject(PUSH_PROVIDERS) providers: readonly PushProvider[],
  ) {
    this.providers = new Map(providers.map((p) => [p.platform, p]));
    this.owner = `beams-delivery@${leaseOwner}`;
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

  /**
   * Starts delivering a publish this process has just accepted, without waiting for a sweep to
   * find it in the work list (which stays the record: the lease keeps the two from doubling up).
   */
  deliverAccepted(publish: Pick<BeamsPendingPublishDocument, 'instance_id' | 'publish_id' | 'target' | 'request' | 'accepted_at'>): void {
    if (this.running.size >= PUBLISHES_IN_FLIGHT) {
      this.moreWaiting = true; // a finished delivery sweeps again and finds it
      return;
    }
    this.start({ _id: documentId(publish.instance_id, publish.publish_id), ...publish });
  }

  private async sweepAll(): Promise<void> {
    const free = PUBLISHES_IN_FLIGHT - this.running.size;
    if (free <= 0) {
      this.moreWaiting = true;
      return;
    }
    // The oldest ones; those this process delivers already are among them, so `free` others are too when there are as many.
    const pending = await this.readModels.find<BeamsPendingPublishDocument>(BEAMS_PENDING_PUBLISHES, {
      sort: [{ field: 'accepted_at' }],
      limit: PUBLISHES_IN_FLIGHT,
    });
    const waiting = pending.filter((p) => !this.running.has(p._id));
    for (const publish of waiting.slice(0, free)) this.start(publish);
    this.moreWaiting = pending.length === PUBLISHES_IN_FLIGHT || waiting.length > free;
  }

  /** Delivers a publish unless this process already does; a failure leaves it pending for a later sweep. */
  private start(publish: BeamsPendingPublishDocument): void {
    const key = publish._id;
    if (this.running.has(key) || this.stop.signal.aborted) return;
    const run = underLease(this.readModels, `beams_delivery:${key}`, this.owner, DELIVERY_LEASE_MS, () => this.deliver(publish))
      .catch((error: unknown) => {
        this.logger.warn(`publish ${publish.publish_id} of ${publish.instance_id} stays pending, retried by a later sweep: ${messageOf(error)}`);
        return false;
      })
      .then((delivered) => {
        this.running.delete(key);
        // Only after a delivery (false: another process holds it): such publishes would otherwise be swept again and again.
        if (delivered && this.moreWaiting) this.sweeper.kick();
      });
    this.running.set(key, run);
  }

  private async deliver(publish: BeamsPendingPublishDocument): Promise<void> {
    const { instance_id: instanceId, publish_id: publishId } = publish;
    const stream = beamsPublishStream(instanceId, publishId);
    // Another process may have finished it since the read model was read.
    if ((await this.pipeline.load(stream, beamsPublishDecider)).state.delivered) return;
    // Each platform's payload; a device whose platform the publish has no payload for gets nothing.
    const payloads = new Map<string, unknown>();
    for (const [platform, provider] of this.providers) {
      const payload = provider.payload(instanceId, publishId, publish.request);
      if (payload !== null) payloads.set(platform, payload);
    }
    const devices = payloads.size === 0 ? [] : (await this.devicesFor(publish)).filter((d) => payloads.has(d.platform));
    const outcomes: Outcome[] = [];
    let next = 0;
    const worker = async () => {
      while (next < devices.length && !this.stop.signal.aborted) {
        const device = devices[next++];
        outcomes.push(await this.pushTo(instanceId, device, payloads.get(device.platform)));
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

  private async pushTo(instanceId: string, device: BeamsDeviceDocument, payload: unknown): Promise<Outcome> {
    const provider = this.providers.get(device.platform)!;
    if (!provider.configured) {
      if (!this.warnedUnconfigured.has(device.platform)) {
        this.warnedUnconfigured.add(device.platform);
        this.logger.warn(`${device.platform} devices are skipped: this deployment has no ${device.platform} credentials (see the README's Beams settings)`);
      }
      return 'failed';
    }
    let address: unknown;
    try {
      address = JSON.parse(this.box.open(device.subscription));
    } catch (error) {
      // Sealed under another master key: no retry can open it.
      this.logger.warn(`device ${device.device_id} of ${instanceId} skipped: its push address cannot be opened (${messageOf(error)})`);
      return 'failed';
    }
    const backoff = new Backoff(500, 30_000);
    for (let attempt = 1; ; attempt++) {
      const result: PushResult = await provider.send(address, payload).catch((error: unknown) => ({ kind: 'retry', why: messageOf(error) }) as const);
      if (result.kind === 'delivered') return 'delivered';
      if (result.kind === 'gone') {
        await this.devices.delete(instanceId, device.device_id, 'push_service_gone', this.clock.now());
        this.logger.log(`device ${device.device_id} of ${instanceId} removed: ${result.why}`);
        return 'removed';
      }
      if (result.kind === 'failed' || attempt >= ATTEMPTS || this.stop.signal.aborted) {
        this.logger.warn(`push to device ${device.device_id} of ${instanceId} failed (${result.why}); giving up after ${attempt} attempts`);
        return 'failed';
      }
      await sleep(backoff.next(), undefined, { signal: this.stop.signal }).catch(() => undefined);
    }
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { SECRET_BOX, SecretBox } from '../../../shared/crypto/secret-box';
import { Actor } from '../../../shared/domain/event';
import { actingInRequest } from '../../../shared/observability/request-context';
import { badRequest } from '../../../shared/domain/errors';
import { KeyRing } from '../../instances/authentication/key-ring';
import { checkpointName } from '../../../../projections/projection';
import { beamsDevicesProjection } from '../../../../projections/beams/beams-devices.projection';
import { beamsDeviceDecider, beamsDeviceStream, DeviceCommand, deviceNotFound } from '../domain/beams-device.decider';
import type { BeamsPlatform } from '../domain/beams-device.events';
import { INTEREST_PATTERN, MAX_INTEREST_LENGTH, MAX_INTERESTS } from '../publish/publish-request';
import { instanceNotFound } from '../secret-key-check';
import { beamsTokenUser } from './beams-token';
import { parseApnsRegistration, parseFcmToken } from './native-push-token';
import { parseWebPushToken } from './web-push-subscription';

/** Device API calls come from browsers with no credential (as in Beams): the audit trail says so. */
const DEVICE_ACTOR: Actor = { key_id: 'device_api' };

const DEVICE_ID = /^(web|apns|fcm)-[0-9a-f-]{36}$/;

export const BEAMS_PLATFORMS: readonly BeamsPlatform[] = ['web', 'apns', 'fcm'];

/** A device id names its platform (`<platform>-<uuid>`): a path of another platform does not find it. */
export const isDeviceOf = (platform: BeamsPlatform, deviceId: string) => DEVICE_ID.test(deviceId) && deviceId.startsWith(`${platform}-`);

/** What a registration sends beside the metadata: `token` for all, `bundleIdentifier` for APNs. */
export interface Registration {
  readonly token?: unknown;
  readonly bundleIdentifier?: unknown;
}

/** The device's push address as the delivery adapter of its platform reads it, from what the SDK sent. */
const pushAddress = (platform: BeamsPlatform, { token, bundleIdentifier }: Registration, webPushHosts: readonly string[]): object => {
  if (platform === 'apns') return parseApnsRegistration(token, bundleIdentifier);
  if (platform === 'fcm') return parseFcmToken(token);
  return parseWebPushToken(token, webPushHosts);
};

/** Only a short version string is kept from what the SDK reports. */
const sdkVersionOf = (value: unknown): string | null => (typeof value === 'string' ? value.slice(0, 64) : null);

export const requireInterest = (interest: unknown): string => {
  if (typeof interest !== 'string' || interest.length === 0 || interest.length > MAX_INTEREST_LENGTH || !INTEREST_PATTERN.test(interest)) {
    throw badRequest('invalid_interest', `Interests are 1 to ${MAX_INTEREST_LENGTH} characters of A-Z a-z 0-9 _ - = @ , . ;`);
  }
  return interest;
};

/**
 * The device registry as the Web, iOS and Android SDKs drive it: register, read and change a
 * device's interests, delete it. Each answers once the change is durable and the registry's
 * read model shows it (delivery reads it).
 */
@Injectable()
export class Devices {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly keyRing: KeyRing,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
    @Inject(CONFIG) private readonly config: ParleyConfig,
  ) {}

  async register(instanceId: string, platform: BeamsPlatform, registration: Registration, sdkVersion: unknown, now: Date, requestId?: string): Promise<string> {
    await this.requireInstance(instanceId);
    const address = pushAddress(platform, registration, this.config.beamsWebPushHosts);
    const deviceId = `${platform}-${randomUUID()}`;
    await this.run(instanceId, deviceId, requestId, {
      type: 'RegisterDevice',
      deviceId,
      platform,
      subscription: this.box.seal(JSON.stringify(address)),
      sdkVersion: sdkVersionOf(sdkVersion),
      now: now.toISOString(),
    });
    return deviceId;
  }

  async interests(instanceId: string, deviceId: string): Promise<readonly string[]> {
    await this.requireInstance(instanceId);
    if (!DEVICE_ID.test(deviceId)) throw deviceNotFound();
    const { state } = await this.pipeline.load(beamsDeviceStream(instanceId, deviceId), beamsDeviceDecider);
    if (state.status !== 'registered') throw deviceNotFound();
    return state.interests;
  }

  async setInterests(instanceId: string, deviceId: string, interests: unknown, now: Date, requestId?: string): Promise<void> {
    if (!Array.isArray(interests) || interests.length > MAX_INTERESTS) {
      throw badRequest('invalid_interests', `interests must be an array of at most ${MAX_INTERESTS} interests`);
    }
    await this.change(instanceId, deviceId, requestId, { type: 'SetInterests', interests: interests.map(requireInterest), now: now.toISOString() });
  }

  async addInterest(instanceId: string, deviceId: string, interest: string, now: Date, requestId?: string): Promise<void> {
    await this.change(instanceId, deviceId, requestId, { type: 'AddInterest', interest: requireInterest(interest), now: now.toISOString() });
  }

  async removeInterest(instanceId: string, deviceId: string, interest: string, now: Date, requestId?: string): Promise<void> {
    await this.change(instanceId, deviceId, requestId, { type: 'RemoveInterest', interest: requireInterest(interest), now: now.toISOString() });
  }

  /** The Android SDK's token refresh (`PUT …/devices/fcm/<id>/token`): later pushes go to the new token. */
  async changeToken(instanceId: string, deviceId: string, token: unknown, now: Date, requestId?: string): Promise<void> {
    const address = parseFcmToken(token);
    await this.change(instanceId, deviceId, requestId, { type: 'ChangeToken', subscription: this.box.seal(JSON.stringify(address)), now: now.toISOString() });
  }

  async updateMetadata(instanceId: string, deviceId: string, sdkVersion: unknown, now: Date, requestId?: string): Promise<void> {
    await this.change(instanceId, deviceId, requestId, { type: 'UpdateMetadata', sdkVersion: sdkVersionOf(sdkVersion), now: now.toISOString() });
  }

  /**
   * `setUserId`: the Beams token (signed by the customer's backend or the Chatkit Beams token
   * provider) proves the user; the device then receives publishes to that user.
   */
  async setUser(instanceId: string, deviceId: string, token: string | null, now: Date, requestId?: string): Promise<void> {
    const instance = await this.keyRing.instance(instanceId);
    if (!instance) throw instanceNotFound(instanceId);
    const userId = beamsTokenUser(token, instanceId, instance.keys.values(), this.config.tokenMaxLifetimeSeconds);
    if (!DEVICE_ID.test(deviceId)) throw deviceNotFound();
    await this.run(instanceId, deviceId, requestId, { type: 'SetUser', userId, now: now.toISOString() });
  }

  /** Deleting a device that is already gone succeeds (the SDK's `stop` may be retried). */
  async delete(instanceId: string, deviceId: string, reason: 'stopped' | 'push_service_gone', now: Date, requestId?: string): Promise<void> {
    await this.requireInstance(instanceId);
    if (!DEVICE_ID.test(deviceId)) throw deviceNotFound();
    await this.run(instanceId, deviceId, requestId, { type: 'DeleteDevice', reason, now: now.toISOString() });
  }

  private async change(instanceId: string, deviceId: string, requestId: string | undefined, command: DeviceCommand): Promise<void> {
    await this.requireInstance(instanceId);
    if (!DEVICE_ID.test(deviceId)) throw deviceNotFound();
    await this.run(instanceId, deviceId, requestId, command);
  }

  private async run(instanceId: string, deviceId: string, requestId: string | undefined, command: DeviceCommand): Promise<void> {
    await this.pipeline.run(
      beamsDeviceStream(instanceId, deviceId),
      beamsDeviceDecider,
      command,
      // A fresh actor per request: the request id is marked on the actor object (never on the shared one).
      { instance_id: instanceId, actor: actingInRequest({ ...DEVICE_ACTOR }, requestId), occurred_at: command.now },
      { awaitProjections: [checkpointName(beamsDevicesProjection)] },
    );
  }

  async requireInstance(instanceId: string): Promise<void> {
    if (!(await this.keyRing.instance(instanceId))) throw instanceNotFound(instanceId);
  }
}

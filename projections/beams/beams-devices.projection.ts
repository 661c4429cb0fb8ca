import type { RecordedEvent } from '../../src/shared/domain/event';
import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const BEAMS_DEVICES = 'beams_devices';
export const BEAMS_DEVICE_INTERESTS = 'beams_device_interests';
/** The device streams' category (`beamsdevice-<instance>.<device>`), as the Beams domain names it. */
const DEVICE_CATEGORY = 'beamsdevice';

/** A live device and its push subscription, still sealed (only the delivery worker opens it). */
export interface BeamsDeviceDocument extends Document {
  readonly instance_id: string;
  readonly device_id: string;
  readonly platform: 'web';
  readonly subscription: unknown;
}

/** One row per (device, interest): publishes to interests find their devices by an index, not a scan. */
export interface BeamsDeviceInterestDocument extends Document {
  readonly instance_id: string;
  readonly interest: string;
  readonly device_id: string;
}

export const beamsDeviceDocumentId = (instanceId: string, deviceId: string) => documentId(instanceId, deviceId);
const interestDocumentId = (instanceId: string, deviceId: string, interest: string) => documentId(instanceId, deviceId, interest);

/** The Beams device registry: devices by id, and which devices hold each interest. A deleted device leaves both. */
export const beamsDevicesProjection: ProjectionDefinition = {
  name: 'beams_devices',
  version: 1,
  collections: [
    { name: BEAMS_DEVICES, indexes: [{ fields: ['instance_id'] }] },
    { name: BEAMS_DEVICE_INTERESTS, indexes: [{ fields: ['instance_id', 'interest'] }, { fields: ['instance_id', 'device_id'] }] },
  ],
  handles: ['BeamsDeviceRegistered', 'BeamsDeviceInterestsChanged', 'BeamsDeviceDeleted'],

  targets(event: RecordedEvent): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream || stream.category !== DEVICE_CATEGORY) return [];
    const device = { collection: BEAMS_DEVICES, id: beamsDeviceDocumentId(stream.instanceId, stream.id) };
    if (event.type === 'BeamsDeviceRegistered') return [device];
    if (event.type === 'BeamsDeviceDeleted') {
      return [device, { collection: BEAMS_DEVICE_INTERESTS, where: { instance_id: stream.instanceId, device_id: stream.id } }];
    }
    const { added, removed } = event.data as { added: string[]; removed: string[] };
    return [...added, ...removed].map((interest) => ({
      collection: BEAMS_DEVICE_INTERESTS,
      id: interestDocumentId(stream.instanceId, stream.id, interest),
    }));
  },

  evolve(_document, event, target) {
    const stream = parseStreamName(event.streamName)!;
    if (event.type === 'BeamsDeviceDeleted') return null;
    if (event.type === 'BeamsDeviceRegistered') {
      const data = event.data as { platform: 'web'; subscription: unknown };
      return {
        _id: '',
        instance_id: stream.instanceId,
        device_id: stream.id,
        platform: data.platform,
        subscription: data.subscription,
      } satisfies BeamsDeviceDocument;
    }
    const interest = (JSON.parse(target.id) as string[])[2];
    const { interests } = event.data as { interests: string[] };
    if (!interests.includes(interest)) return null;
    return { _id: '', instance_id: stream.instanceId, interest, device_id: stream.id } satisfies BeamsDeviceInterestDocument;
  },
};

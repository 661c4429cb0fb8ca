import type { SealedSecret } from '../../src/shared/crypto/secret-box';
import { documentId, documentIdParts, parseStreamName } from '../../src/shared/domain/streams';
import type { Document, ProjectionDefinition, Target } from '../projection';
import { BEAMS_DEVICE_CATEGORY } from '../../src/modules/beams/domain/beams-device.decider';
import type {
  BeamsDeviceDeleted,
  BeamsDeviceInterestsChanged,
  BeamsDeviceRegistered,
  BeamsDeviceTokenChanged,
  BeamsDeviceUserSet,
  BeamsPlatform,
} from '../../src/modules/beams/domain/beams-device.events';
import { BEAMS_USER_CATEGORY } from '../../src/modules/beams/domain/beams.deciders';
import type { BeamsUserDeleted } from '../../src/modules/beams/domain/beams.events';

export const BEAMS_DEVICES = 'beams_devices';
export const BEAMS_DEVICE_INTERESTS = 'beams_device_interests';

/** A live device, the push service that reaches it, and its push address, still sealed (only the delivery worker opens it). */
export interface BeamsDeviceDocument extends Document {
  readonly instance_id: string;
  readonly device_id: string;
  readonly platform: BeamsPlatform;
  readonly subscription: SealedSecret;
  /** The Beams user the device was associated with by a Beams token, if any. */
  readonly user_id: string | null;
}

/** One row per (device, interest): publishes to interests find their devices by an index, not a scan. */
export interface BeamsDeviceInterestDocument extends Document {
  readonly instance_id: string;
  readonly interest: string;
  readonly device_id: string;
}

export const beamsDeviceDocumentId = (instanceId: string, deviceId: string) => documentId(instanceId, deviceId);
const interestDocumentId = (instanceId: string, deviceId: string, interest: string) => documentId(instanceId, deviceId, interest);

/**
 * The Beams device registry: devices by id (and user), and which devices hold each interest.
 * A deleted device leaves both; a deleted user's devices leave the registry, so no publish
 * (to the user or to an interest) reaches them.
 */
export const beamsDevicesProjection: ProjectionDefinition<
  BeamsDeviceRegistered | BeamsDeviceTokenChanged | BeamsDeviceInterestsChanged | BeamsDeviceUserSet | BeamsDeviceDeleted | BeamsUserDeleted,
  BeamsDeviceDocument | BeamsDeviceInterestDocument
> = {
  name: 'beams_devices',
  version: 2,
  collections: [
    // (instance_id, user_id, device_id): a user's devices a page at a time (the admin route).
    { name: BEAMS_DEVICES, indexes: [{ fields: ['instance_id'] }, { fields: ['instance_id', 'user_id'] }, { fields: ['instance_id', 'user_id', 'device_id'] }] },
    { name: BEAMS_DEVICE_INTERESTS, indexes: [{ fields: ['instance_id', 'interest'] }, { fields: ['instance_id', 'device_id'] }] },
  ],
  handles: ['BeamsDeviceRegistered', 'BeamsDeviceTokenChanged', 'BeamsDeviceInterestsChanged', 'BeamsDeviceUserSet', 'BeamsDeviceDeleted', 'BeamsUserDeleted'],
  destroys: ['BeamsDeviceDeleted', 'BeamsUserDeleted'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    if (event.type === 'BeamsUserDeleted') {
      if (stream.category !== BEAMS_USER_CATEGORY) return [];
      return [{ collection: BEAMS_DEVICES, where: { instance_id: stream.instanceId, user_id: event.data.user_id } }];
    }
    if (stream.category !== BEAMS_DEVICE_CATEGORY) return [];
    const device = { collection: BEAMS_DEVICES, id: beamsDeviceDocumentId(stream.instanceId, stream.id) };
    if (event.type === 'BeamsDeviceRegistered' || event.type === 'BeamsDeviceUserSet' || event.type === 'BeamsDeviceTokenChanged') return [device];
    if (event.type === 'BeamsDeviceDeleted') {
      return [device, { collection: BEAMS_DEVICE_INTERESTS, where: { instance_id: stream.instanceId, device_id: stream.id } }];
    }
    const { added, removed } = event.data;
    return [...added, ...removed].map((interest) => ({
      collection: BEAMS_DEVICE_INTERESTS,
      id: interestDocumentId(stream.instanceId, stream.id, interest),
    }));
  },

  evolve(doc, event, target) {
    const stream = parseStreamName(event.streamName)!;
    switch (event.type) {
      case 'BeamsDeviceDeleted':
      case 'BeamsUserDeleted':
        return null;
      case 'BeamsDeviceUserSet':
        // Absent when the device was deleted, or forgot with its earlier user.
        return doc ? { ...doc, user_id: event.data.user_id } : null;
      case 'BeamsDeviceTokenChanged':
        // Erased (null): the device's key is destroyed, so the device is gone (deleted, or its user).
        return doc && event.data.subscription ? { ...doc, subscription: event.data.subscription } : null;
      case 'BeamsDeviceRegistered':
        if (event.data.subscription === null) return null;
        return {
          _id: '',
          instance_id: stream.instanceId,
          device_id: stream.id,
          platform: event.data.platform,
          subscription: event.data.subscription,
          user_id: null,
        } satisfies BeamsDeviceDocument;
      default: {
        const interest = documentIdParts(target.id)[2];
        if (!event.data.interests.includes(interest)) return null;
        return { _id: '', instance_id: stream.instanceId, interest, device_id: stream.id } satisfies BeamsDeviceInterestDocument;
      }
    }
  },
};

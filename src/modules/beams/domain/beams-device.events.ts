import { DomainEvent } from '../../../shared/domain/event';
import type { SealedSecret } from '../../../shared/crypto/secret-box';

/**
 * A Web Push device: its subscription (endpoint and keys, a capability to push to the
 * browser) is stored sealed under the master key, never plain.
 */
export type BeamsDeviceRegistered = DomainEvent<
  'BeamsDeviceRegistered',
  { device_id: string; platform: 'web'; subscription: SealedSecret; sdk_version: string | null; registered_at: string }
>;

/** The device's interests after a change, and what the change added and removed (projections need only the difference). */
export type BeamsDeviceInterestsChanged = DomainEvent<
  'BeamsDeviceInterestsChanged',
  { interests: string[]; added: string[]; removed: string[]; changed_at: string }
>;

/** The device belongs to a Beams user (proved by a Beams token for that user); publishes to the user reach it. */
export type BeamsDeviceUserSet = DomainEvent<'BeamsDeviceUserSet', { user_id: string; set_at: string }>;

/** `stopped`: the SDK deleted it; `push_service_gone`: the push service answered 404/410 for its subscription. */
export type BeamsDeviceDeleted = DomainEvent<'BeamsDeviceDeleted', { reason: 'stopped' | 'push_service_gone'; deleted_at: string }>;

/** The SDK version the device reported (the Web SDK reports it when it changes). */
export type BeamsDeviceMetadataUpdated = DomainEvent<'BeamsDeviceMetadataUpdated', { sdk_version: string | null; updated_at: string }>;

export type BeamsDeviceEvent = BeamsDeviceRegistered | BeamsDeviceInterestsChanged | BeamsDeviceMetadataUpdated | BeamsDeviceUserSet | BeamsDeviceDeleted;

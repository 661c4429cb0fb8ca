import { DomainEvent } from '../../../shared/domain/event';
import type { SealedSecret } from '../../../shared/crypto/secret-box';

/** The push services Beams devices are reached through: Web Push, APNs (iOS, macOS) and FCM (Android). */
export type BeamsPlatform = 'web' | 'apns' | 'fcm';

/**
 * A device and its push address, a capability to push to it, stored sealed under the master
 * key, never plain: for `web` the subscription JSON (endpoint and keys), for `apns`
 * `{token, bundle_id}`, for `fcm` `{token}`. In the log it is sealed again under the device's
 * data key, destroyed by the device's delete, its user's delete and the wipe: it then reads as
 * null (an erased push address reaches nothing).
 */
export type BeamsDeviceRegistered = DomainEvent<
  'BeamsDeviceRegistered',
  { device_id: string; platform: BeamsPlatform; subscription: SealedSecret | null; sdk_version: string | null; registered_at: string }
>;

/**
 * The push service gave the device a new token (the Android SDK's refresh): its sealed push
 * address after the change, under the device's data key (named by `registered_at`, absent in
 * events written before).
 */
export type BeamsDeviceTokenChanged = DomainEvent<
  'BeamsDeviceTokenChanged',
  { subscription: SealedSecret | null; changed_at: string; registered_at?: string }
>;

/** The device's interests after a change, and what the change added and removed (projections need only the difference). */
export type BeamsDeviceInterestsChanged = DomainEvent<
  'BeamsDeviceInterestsChanged',
  { interests: string[]; added: string[]; removed: string[]; changed_at: string }
>;

/** The device belongs to a Beams user (proved by a Beams token for that user); publishes to the user reach it. */
export type BeamsDeviceUserSet = DomainEvent<'BeamsDeviceUserSet', { user_id: string; set_at: string }>;

/**
 * `stopped`: the SDK deleted it; `push_service_gone`: the push service said the address is no
 * longer valid (Web Push 404/410, APNs 410 or BadDeviceToken, FCM UNREGISTERED or an invalid token).
 */
export type BeamsDeviceDeleted = DomainEvent<'BeamsDeviceDeleted', { reason: 'stopped' | 'push_service_gone'; deleted_at: string }>;

/** The SDK version the device reported (the Web SDK reports it when it changes). */
export type BeamsDeviceMetadataUpdated = DomainEvent<'BeamsDeviceMetadataUpdated', { sdk_version: string | null; updated_at: string }>;

export type BeamsDeviceEvent =
  | BeamsDeviceRegistered
  | BeamsDeviceTokenChanged
  | BeamsDeviceInterestsChanged | BeamsDeviceMetadataUpdated | BeamsDeviceUserSet | BeamsDeviceDeleted;

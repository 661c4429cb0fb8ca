import type { SealedSecret } from '../../../shared/crypto/secret-box';
import { Decider } from '../../../shared/domain/decider';
import { forbidden, notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { BeamsDeviceEvent, BeamsPlatform } from './beams-device.events';

/** One stream per device (`beamsdevice-<instance>.<deviceId>`). */
export const BEAMS_DEVICE_CATEGORY = 'beamsdevice';
export const beamsDeviceStream = (instanceId: string, deviceId: string) => streamName(BEAMS_DEVICE_CATEGORY, instanceId, deviceId);

export interface DeviceState {
  readonly status: 'absent' | 'registered' | 'deleted';
  readonly interests: readonly string[];
  readonly sdkVersion: string | null;
  readonly userId: string | null;
  /** When the device was registered: names its data key. */
  readonly registeredAt: string | null;
}

export type DeviceCommand =
  | { type: 'RegisterDevice'; deviceId: string; platform: BeamsPlatform; subscription: SealedSecret; sdkVersion: string | null; now: string }
  | { type: 'ChangeToken'; subscription: SealedSecret; now: string }
  | { type: 'SetInterests'; interests: readonly string[]; now: string }
  | { type: 'AddInterest'; interest: string; now: string }
  | { type: 'RemoveInterest'; interest: string; now: string }
  | { type: 'UpdateMetadata'; sdkVersion: string | null; now: string }
  | { type: 'SetUser'; userId: string; now: string }
  | { type: 'DeleteDevice'; reason: 'stopped' | 'push_service_gone'; now: string };

export const deviceNotFound = () => notFound('device_not_found', 'There is no such device (never registered, or deleted)');

const change = (state: DeviceState, next: readonly string[], now: string): BeamsDeviceEvent[] => {
  const interests = [...new Set(next)];
  const added = interests.filter((i) => !state.interests.includes(i));
  const removed = state.interests.filter((i) => !interests.includes(i));
  if (added.length === 0 && removed.length === 0) return [];
  return [{ type: 'BeamsDeviceInterestsChanged', data: { interests, added, removed, changed_at: now } }];
};

/** Interest changes record only what differs, so a repeated call adds nothing; a deleted device stays deleted. */
export const beamsDeviceDecider: Decider<DeviceState, DeviceCommand, BeamsDeviceEvent> = {
  initialState: () => ({ status: 'absent', interests: [], sdkVersion: null, userId: null, registeredAt: null }),
  evolve: (state, event) => {
    switch (event.type) {
      case 'BeamsDeviceRegistered':
        return { status: 'registered', interests: [], sdkVersion: event.data.sdk_version, userId: null, registeredAt: event.data.registered_at };
      case 'BeamsDeviceTokenChanged':
        return state;
      case 'BeamsDeviceInterestsChanged':
        return { ...state, interests: event.data.interests };
      case 'BeamsDeviceMetadataUpdated':
        return { ...state, sdkVersion: event.data.sdk_version };
      case 'BeamsDeviceUserSet':
        return { ...state, userId: event.data.user_id };
      case 'BeamsDeviceDeleted':
        return { status: 'deleted', interests: [], sdkVersion: null, userId: null, registeredAt: null };
    }
  },
  decide: (command, state) => {
    if (command.type === 'RegisterDevice') {
      if (state.status !== 'absent') return [];
      const { deviceId, platform, subscription, sdkVersion, now } = command;
      return [
        {
          type: 'BeamsDeviceRegistered',
          data: { device_id: deviceId, platform, subscription, sdk_version: sdkVersion, registered_at: now },
        },
      ];
    }
    if (command.type === 'DeleteDevice') {
      return state.status === 'registered' ? [{ type: 'BeamsDeviceDeleted', data: { reason: command.reason, deleted_at: command.now } }] : [];
    }
    if (state.status !== 'registered') throw deviceNotFound();
    // Sealing is randomised, so a repeated refresh of the same token is recorded again: harmless, and rare.
    if (command.type === 'ChangeToken') {
      const registeredAt = state.registeredAt === null ? {} : { registered_at: state.registeredAt };
      return [{ type: 'BeamsDeviceTokenChanged', data: { subscription: command.subscription, changed_at: command.now, ...registeredAt } }];
    }
    if (command.type === 'UpdateMetadata') {
      return command.sdkVersion === state.sdkVersion
        ? []
        : [{ type: 'BeamsDeviceMetadataUpdated', data: { sdk_version: command.sdkVersion, updated_at: command.now } }];
    }
    if (command.type === 'SetUser') {
      // As in Beams, a device changes user only through a new registration (the SDK's clearAllState).
      if (state.userId !== null && state.userId !== command.userId) {
        throw forbidden('device_has_other_user', 'This device is already associated with another user');
      }
      return state.userId === command.userId ? [] : [{ type: 'BeamsDeviceUserSet', data: { user_id: command.userId, set_at: command.now } }];
    }
    if (command.type === 'SetInterests') return change(state, command.interests, command.now);
    if (command.type === 'AddInterest') return change(state, [...state.interests, command.interest], command.now);
    return change(state, state.interests.filter((i) => i !== command.interest), command.now);
  },
};

import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { beamsDeviceDecider, DeviceCommand } from './beams-device.decider';
import { BeamsDeviceEvent } from './beams-device.events';

const now = '2026-01-01T00:00:00.000Z';
const sealed = { alg: 'aes-256-gcm' as const, iv: 'i', tag: 't', ciphertext: 'c' };
const register: DeviceCommand = { type: 'RegisterDevice', deviceId: 'web-1', platform: 'web', subscription: sealed, sdkVersion: null, now };
const given = deciderSpecification(beamsDeviceDecider);
const registered: BeamsDeviceEvent = {
  type: 'BeamsDeviceRegistered',
  data: { device_id: 'web-1', platform: 'web', subscription: sealed, sdk_version: null, registered_at: now },
};
const interestsChanged = (interests: string[], added: string[], removed: string[]): BeamsDeviceEvent => ({
  type: 'BeamsDeviceInterestsChanged',
  data: { interests, added, removed, changed_at: now },
});

describe('beams device decider', () => {
  it('registers a device once', () => {
    given().when(register).then([registered]);
    given(registered).when(register).thenNothingHappened();
  });

  it('records only the difference an interest change makes, and nothing for a repeated one', () => {
    const set = given(registered).when({ type: 'SetInterests', interests: ['a', 'b', 'a'], now }).then([interestsChanged(['a', 'b'], ['a', 'b'], [])]);
    given(registered, set).when({ type: 'AddInterest', interest: 'a', now }).thenNothingHappened();
    given(registered, set).when({ type: 'SetInterests', interests: ['b', 'c'], now }).then([interestsChanged(['b', 'c'], ['c'], ['a'])]);
    given(registered, set).when({ type: 'RemoveInterest', interest: 'b', now }).then([interestsChanged(['a'], [], ['b'])]);
  });

  it('records a refreshed token sealed, and refuses it for a device that is not registered', () => {
    const renewed = { ...sealed, ciphertext: 'c2' };
    given(registered)
      .when({ type: 'ChangeToken', subscription: renewed, now })
      .then([{ type: 'BeamsDeviceTokenChanged', data: { subscription: renewed, changed_at: now, registered_at: now } }]);
    given().when({ type: 'ChangeToken', subscription: renewed, now }).thenThrows(DomainError, { code: 'not_found/device_not_found' });
  });

  it('records a reported SDK version only when it changed', () => {
    given(registered).when({ type: 'UpdateMetadata', sdkVersion: null, now }).thenNothingHappened();
    given(registered)
      .when({ type: 'UpdateMetadata', sdkVersion: '2.1.1', now })
      .then([{ type: 'BeamsDeviceMetadataUpdated', data: { sdk_version: '2.1.1', updated_at: now } }]);
  });

  it('deletes a device once; a deleted or unknown device refuses interest changes with 404', () => {
    const deleted = given(registered)
      .when({ type: 'DeleteDevice', reason: 'stopped', now })
      .then([{ type: 'BeamsDeviceDeleted', data: { reason: 'stopped', deleted_at: now } }]);
    given(registered, deleted).when({ type: 'DeleteDevice', reason: 'stopped', now }).thenNothingHappened();
    for (const history of [[], [registered, ...deleted]]) {
      given(history).when({ type: 'AddInterest', interest: 'a', now }).thenThrows(DomainError, { status: 404 });
    }
    given(registered, deleted).when(register).thenNothingHappened();
  });

  it('associates a device with one user: again with the same user is nothing, another user is refused', () => {
    const set = given(registered)
      .when({ type: 'SetUser', userId: 'alice', now })
      .then([{ type: 'BeamsDeviceUserSet', data: { user_id: 'alice', set_at: now } }]);
    given(registered, set).when({ type: 'SetUser', userId: 'alice', now }).thenNothingHappened();
    given(registered, set).when({ type: 'SetUser', userId: 'bob', now }).thenThrows(DomainError, { code: 'forbidden/device_has_other_user' });
    given().when({ type: 'SetUser', userId: 'alice', now }).thenThrows(DomainError, { code: 'not_found/device_not_found' });
  });
});

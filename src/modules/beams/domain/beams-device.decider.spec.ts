import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { beamsDeviceDecider, DeviceCommand } from './beams-device.decider';
import { BeamsDeviceEvent } from './beams-device.events';

const now = '2026-01-01T00:00:00.000Z';
const sealed = { alg: 'aes-256-gcm' as const, iv: 'i', tag: 't', ciphertext: 'c' };
const register: DeviceCommand = { type: 'RegisterDevice', deviceId: 'web-1', platform: 'web', subscription: sealed, sdkVersion: null, now };

/** Given events, when a command: the new events. */
const decide = (given: BeamsDeviceEvent[], command: DeviceCommand) => beamsDeviceDecider.decide(command, fold(beamsDeviceDecider, given));
const registered = beamsDeviceDecider.decide(register, beamsDeviceDecider.initialState());

describe('beams device decider', () => {
  it('records only the difference an interest change makes, and nothing for a repeated one', () => {
    const set = decide(registered, { type: 'SetInterests', interests: ['a', 'b', 'a'], now });
    expect(set.map((e) => e.data)).toEqual([{ interests: ['a', 'b'], added: ['a', 'b'], removed: [], changed_at: now }]);
    const after = [...registered, ...set];
    expect(decide(after, { type: 'AddInterest', interest: 'a', now })).toEqual([]);
    expect(decide(after, { type: 'SetInterests', interests: ['b', 'c'], now }).map((e) => e.data)).toEqual([
      { interests: ['b', 'c'], added: ['c'], removed: ['a'], changed_at: now },
    ]);
    expect(decide(after, { type: 'RemoveInterest', interest: 'b', now }).map((e) => e.data)).toEqual([
      { interests: ['a'], added: [], removed: ['b'], changed_at: now },
    ]);
  });

  it('records a refreshed token sealed, and refuses it for a device that is not registered', () => {
    const renewed = { ...sealed, ciphertext: 'c2' };
    expect(decide(registered, { type: 'ChangeToken', subscription: renewed, now }).map((e) => e.data)).toEqual([{ subscription: renewed, changed_at: now }]);
    expect(() => decide([], { type: 'ChangeToken', subscription: renewed, now })).toThrow(DomainError);
  });

  it('records a reported SDK version only when it changed', () => {
    expect(decide(registered, { type: 'UpdateMetadata', sdkVersion: null, now })).toEqual([]);
    expect(decide(registered, { type: 'UpdateMetadata', sdkVersion: '2.1.1', now }).map((e) => e.type)).toEqual(['BeamsDeviceMetadataUpdated']);
  });

  it('deletes a device once; a deleted or unknown device refuses interest changes with 404', () => {
    const deleted = decide(registered, { type: 'DeleteDevice', reason: 'stopped', now });
    expect(deleted.map((e) => e.type)).toEqual(['BeamsDeviceDeleted']);
    expect(decide([...registered, ...deleted], { type: 'DeleteDevice', reason: 'stopped', now })).toEqual([]);
    for (const given of [[], [...registered, ...deleted]]) {
      expect(() => decide(given, { type: 'AddInterest', interest: 'a', now })).toThrow(DomainError);
    }
    expect(decide([...registered, ...deleted], register)).toEqual([]);
  });

  it('associates a device with one user: again with the same user is nothing, another user is refused', () => {
    const set = decide(registered, { type: 'SetUser', userId: 'alice', now });
    expect(set.map((e) => e.data)).toEqual([{ user_id: 'alice', set_at: now }]);
    expect(decide([...registered, ...set], { type: 'SetUser', userId: 'alice', now })).toEqual([]);
    expect(() => decide([...registered, ...set], { type: 'SetUser', userId: 'bob', now })).toThrow(DomainError);
    expect(() => decide([], { type: 'SetUser', userId: 'alice', now })).toThrow(DomainError);
  });
});

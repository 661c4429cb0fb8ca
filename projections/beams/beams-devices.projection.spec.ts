import type { SealedSecret } from '../../src/shared/crypto/secret-box';
import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { forgettingWipedInstances } from '../instance-wipe';
import { BEAMS_DEVICE_INTERESTS, BEAMS_DEVICES, beamsDevicesProjection } from './beams-devices.projection';

const at = '2026-01-01T00:00:00.000Z';
const sealed: SealedSecret = { alg: 'aes-256-gcm', iv: 'i', tag: 't', ciphertext: 'c' };
const registered = (stream: string) =>
  recorded(stream, 'BeamsDeviceRegistered', { device_id: stream.split('.')[1], platform: 'web', subscription: sealed, sdk_version: null, registered_at: at });
const changed = (stream: string, interests: string[], added: string[], removed: string[]) =>
  recorded(stream, 'BeamsDeviceInterestsChanged', { interests, added, removed, changed_at: at });

const interestRows = (docs: Map<string, Record<string, unknown>>) =>
  [...docs.entries()].filter(([key]) => key.startsWith(`${BEAMS_DEVICE_INTERESTS}|`)).map(([, d]) => `${d.device_id}:${d.interest}`).sort();

describe('beams devices projection', () => {
  it('keeps a row per device and interest, following what each change added and removed', async () => {
    const docs = await project(beamsDevicesProjection, [
      registered('beamsdevice-acme.web-1'),
      registered('beamsdevice-acme.web-2'),
      changed('beamsdevice-acme.web-1', ['a', 'b'], ['a', 'b'], []),
      changed('beamsdevice-acme.web-2', ['a'], ['a'], []),
      changed('beamsdevice-acme.web-1', ['b', 'c'], ['c'], ['a']),
    ]);
    expect(interestRows(docs)).toEqual(['web-1:b', 'web-1:c', 'web-2:a']);
    expect([...docs.values()].filter((d) => d.subscription).map((d) => d.device_id)).toEqual(['web-1', 'web-2']);
  });

  it('keeps an APNs or FCM device’s platform, and its new sealed token after a refresh', async () => {
    const refreshed = { ...sealed, ciphertext: 'c2' };
    const docs = await project(beamsDevicesProjection, [
      recorded('beamsdevice-acme.fcm-1', 'BeamsDeviceRegistered', { device_id: 'fcm-1', platform: 'fcm', subscription: sealed, sdk_version: null, registered_at: at }),
      recorded('beamsdevice-acme.fcm-1', 'BeamsDeviceTokenChanged', { subscription: refreshed, changed_at: at }),
      recorded('beamsdevice-acme.apns-1', 'BeamsDeviceRegistered', { device_id: 'apns-1', platform: 'apns', subscription: sealed, sdk_version: null, registered_at: at }),
    ]);
    expect([...docs.values()].map((d) => [d.device_id, d.platform, d.subscription]).sort()).toEqual([
      ['apns-1', 'apns', sealed],
      ['fcm-1', 'fcm', refreshed],
    ]);
  });

  it('forgets a deleted device and all its interests', async () => {
    const docs = await project(beamsDevicesProjection, [
      registered('beamsdevice-acme.web-1'),
      changed('beamsdevice-acme.web-1', ['a', 'b'], ['a', 'b'], []),
      recorded('beamsdevice-acme.web-1', 'BeamsDeviceDeleted', { reason: 'push_service_gone', deleted_at: at }),
    ]);
    expect(docs.size).toBe(0);
  });

  it('records a device’s user, and forgets that user’s devices (only those) when the user is deleted', async () => {
    const docs = await project(beamsDevicesProjection, [
      registered('beamsdevice-acme.web-1'),
      registered('beamsdevice-acme.web-2'),
      registered('beamsdevice-other.web-3'),
      recorded('beamsdevice-acme.web-1', 'BeamsDeviceUserSet', { user_id: 'alice', set_at: at }),
      recorded('beamsdevice-acme.web-2', 'BeamsDeviceUserSet', { user_id: 'bob', set_at: at }),
      recorded('beamsdevice-other.web-3', 'BeamsDeviceUserSet', { user_id: 'alice', set_at: at }),
    ]);
    expect([...docs.values()].map((d) => `${d.instance_id}:${d.device_id}:${d.user_id}`).sort()).toEqual([
      'acme:web-1:alice',
      'acme:web-2:bob',
      'other:web-3:alice',
    ]);
    const after = await project(beamsDevicesProjection, [
      registered('beamsdevice-acme.web-1'),
      registered('beamsdevice-acme.web-2'),
      registered('beamsdevice-other.web-3'),
      recorded('beamsdevice-acme.web-1', 'BeamsDeviceUserSet', { user_id: 'alice', set_at: at }),
      recorded('beamsdevice-acme.web-2', 'BeamsDeviceUserSet', { user_id: 'bob', set_at: at }),
      recorded('beamsdevice-other.web-3', 'BeamsDeviceUserSet', { user_id: 'alice', set_at: at }),
      recorded('beamsuser-acme.alice', 'BeamsUserDeleted', { user_id: 'alice', deleted_at: at }),
    ]);
    expect([...after.values()].map((d) => `${d.instance_id}:${d.device_id}`).sort()).toEqual(['acme:web-2', 'other:web-3']);
  });

  it('drops a wiped instance’s devices, and only those', async () => {
    const docs = await project(forgettingWipedInstances(beamsDevicesProjection), [
      registered('beamsdevice-acme.web-1'),
      changed('beamsdevice-acme.web-1', ['a'], ['a'], []),
      registered('beamsdevice-other.web-1'),
      recorded('wipes-acme.instance', 'InstanceWiped', { wiped_at: at }),
    ]);
    expect([...docs.keys()].every((k) => k.startsWith(`${BEAMS_DEVICES}|`))).toBe(true);
    expect([...docs.values()].map((d) => d.instance_id)).toEqual(['other']);
  });

  it('rebuilds no device whose push address is erased (its key destroyed: the device or its user deleted)', async () => {
    const docs = await project(beamsDevicesProjection, [
      recorded('beamsdevice-acme.fcm-1', 'BeamsDeviceRegistered', { device_id: 'fcm-1', platform: 'fcm', subscription: null, sdk_version: null, registered_at: at }),
      recorded('beamsdevice-acme.fcm-1', 'BeamsDeviceTokenChanged', { subscription: null, changed_at: at }),
      registered('beamsdevice-acme.web-2'),
      recorded('beamsdevice-acme.web-2', 'BeamsDeviceTokenChanged', { subscription: null, changed_at: at }),
    ]);
    expect([...docs.values()].map((d) => d.device_id)).toEqual([]);
  });
});

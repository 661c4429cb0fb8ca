import { BeamsDeviceRegistered, BeamsDeviceTokenChanged } from './beams-device.events';
import { BeamsPublishAccepted, BeamsUserDeleted } from './beams.events';
import {
  beamsDeviceDeletedShreds,
  beamsDeviceRegisteredPersonalData,
  beamsDeviceTokenChangedPersonalData,
  beamsPublishAcceptedPersonalData,
  beamsPublishDeliveredShreds,
  beamsUserDeletedShreds,
} from './beams.personal-data';

const history = { readStream: async () => [] };
const sealed = { alg: 'aes-256-gcm' as const, iv: 'i', tag: 't', ciphertext: 'c' };
const accepted: BeamsPublishAccepted = {
  type: 'BeamsPublishAccepted',
  data: { publish_id: 'pubid-1', target: { kind: 'users', users: ['u'] }, request: { web: { notification: { title: 't' } } }, webhook_url: null, accepted_at: 'a' },
};
const registered: BeamsDeviceRegistered = {
  type: 'BeamsDeviceRegistered',
  data: { device_id: 'web-1', platform: 'web', subscription: sealed, sdk_version: null, registered_at: '2026-01-01T00:00:00.000Z' },
};
const tokenChanged = (registered_at?: string): BeamsDeviceTokenChanged => ({
  type: 'BeamsDeviceTokenChanged',
  data: { subscription: sealed, changed_at: 'c', ...(registered_at && { registered_at }) },
});
const userDeleted = (data: Partial<BeamsUserDeleted['data']> = {}): BeamsUserDeleted => ({ type: 'BeamsUserDeleted', data: { user_id: 'u', deleted_at: 'd', ...data } });
const prefixOf = (selector: unknown) => (selector as { prefix: string }).prefix;

describe('beams personal data', () => {
  it("seals a publish's notification under the publish's key, and its delivery destroys it", async () => {
    expect(beamsPublishAcceptedPersonalData.fields).toEqual(['request']);
    expect(beamsPublishAcceptedPersonalData.erased).toEqual({ request: {} });
    const key = beamsPublishAcceptedPersonalData.keyOf(accepted, 'beamspublish-acme.pubid-1');
    expect(key).toEqual({ id: 'acme/beams-publish/pubid-1', owner: null });
    const delivered = { type: 'BeamsPublishDelivered' as const, data: { devices: 1, delivered: 1, failed: 0, removed: 0, delivered_at: 'd' } };
    expect(await beamsPublishDeliveredShreds.destroys(delivered, 'beamspublish-acme.pubid-1', history)).toEqual([{ ids: [key!.id] }]);
    expect(beamsPublishAcceptedPersonalData.keyOf(accepted, 'feed-acme.f')).toBeNull();
  });

  it("seals a device's push address and every refresh of it under the device's key; its delete destroys them all, and no other device's", async () => {
    const key = beamsDeviceRegisteredPersonalData.keyOf(registered, 'beamsdevice-acme.web-1')!.id;
    expect(key).toBe('acme/beams-device/web-1@2026-01-01T00%3A00%3A00.000Z');
    expect(beamsDeviceRegisteredPersonalData.erased).toEqual({ subscription: null });
    expect(beamsDeviceTokenChangedPersonalData.keyOf(tokenChanged('2026-01-01T00:00:00.000Z'), 'beamsdevice-acme.web-1')!.id).toBe(key);
    const older = beamsDeviceTokenChangedPersonalData.keyOf(tokenChanged(), 'beamsdevice-acme.web-1')!.id;
    const deleted = { type: 'BeamsDeviceDeleted' as const, data: { reason: 'stopped' as const, deleted_at: 'd' } };
    const prefix = prefixOf((await beamsDeviceDeletedShreds.destroys(deleted, 'beamsdevice-acme.web-1', history))[0]);
    expect(key.startsWith(prefix) && older.startsWith(prefix)).toBe(true);
    expect(beamsDeviceRegisteredPersonalData.keyOf({ ...registered }, 'beamsdevice-acme.web-10')!.id.startsWith(prefix)).toBe(false);
  });

  it("destroys a deleted user's devices and undelivered publishes as the delete names them; one recorded before names none", async () => {
    const selectors = await beamsUserDeletedShreds.destroys(userDeleted({ device_ids: ['web-1'], publish_ids: ['pubid-1'] }), 'beamsuser-acme.u', history);
    expect(selectors).toEqual([{ prefixes: ['acme/beams-device/web-1@'] }, { ids: ['acme/beams-publish/pubid-1'] }]);
    expect(beamsDeviceRegisteredPersonalData.keyOf(registered, 'beamsdevice-acme.web-1')!.id.startsWith('acme/beams-device/web-1@')).toBe(true);
    expect(await beamsUserDeletedShreds.destroys(userDeleted(), 'beamsuser-acme.u', history)).toEqual([]);
  });
});

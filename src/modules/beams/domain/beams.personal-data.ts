import { dataKeyIds, PersonalDataRule, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import { BEAMS_DEVICE_CATEGORY } from './beams-device.decider';
import { BeamsDeviceDeleted, BeamsDeviceRegistered, BeamsDeviceTokenChanged } from './beams-device.events';
import { BEAMS_PUBLISH_CATEGORY, BEAMS_USER_CATEGORY } from './beams.deciders';
import { BeamsPublishAccepted, BeamsPublishDelivered, BeamsUserDeleted } from './beams.events';

/** The instance and id of a stream of `category`, or null. */
const streamOf = (stream: string, category: string) => {
  const parsed = parseStreamName(stream);
  return parsed && parsed.category === category ? parsed : null;
};

/**
 * A publish's notification (the `apns` / `fcm` / `web` payloads and whatever else the request
 * held) under the publish's own key: the targets stay readable (webhooks and the audit say
 * who a publish went to), the content goes once nothing needs it.
 */
export const beamsPublishAcceptedPersonalData: PersonalDataRule<BeamsPublishAccepted> = {
  type: 'BeamsPublishAccepted',
  fields: ['request'],
  erased: { request: {} },
  keyOf(event, stream) {
    const parsed = streamOf(stream, BEAMS_PUBLISH_CATEGORY);
    return parsed ? { id: dataKeyIds.beamsPublish(parsed.instanceId, event.data.publish_id), owner: null } : null;
  },
};

/**
 * A delivered publish's notification is destroyed: delivery is final (retries happen before
 * it), webhooks carry only the targets and counts, and a rebuild of the work list leaves it out.
 * By the shred sweep, a page of deliveries in one write (publish ids are random, never made
 * again): a destroy of its own per delivery (a write and a WAL truncation of the key store)
 * about halved the publish rate.
 */
export const beamsPublishDeliveredShreds: ShredRule<BeamsPublishDelivered> = {
  type: 'BeamsPublishDelivered',
  deferred: true,
  destroys(_event, stream) {
    const parsed = streamOf(stream, BEAMS_PUBLISH_CATEGORY);
    return parsed ? [{ ids: [dataKeyIds.beamsPublish(parsed.instanceId, parsed.id)] }] : [];
  },
};

/** A device's push address (sealed under the master key as well) under the device's key; a token refresh uses the same key. */
export const beamsDeviceRegisteredPersonalData: PersonalDataRule<BeamsDeviceRegistered> = {
  type: 'BeamsDeviceRegistered',
  fields: ['subscription'],
  erased: { subscription: null },
  keyOf(event, stream) {
    const parsed = streamOf(stream, BEAMS_DEVICE_CATEGORY);
    return parsed ? { id: dataKeyIds.beamsDevice(parsed.instanceId, parsed.id, event.data.registered_at), owner: null } : null;
  },
};

/** A refreshed push address under the device's key (one recorded without the registration's time: under the device's prefix, still destroyed with it). */
export const beamsDeviceTokenChangedPersonalData: PersonalDataRule<BeamsDeviceTokenChanged> = {
  type: 'BeamsDeviceTokenChanged',
  fields: ['subscription'],
  erased: { subscription: null },
  keyOf(event, stream) {
    const parsed = streamOf(stream, BEAMS_DEVICE_CATEGORY);
    return parsed ? { id: dataKeyIds.beamsDevice(parsed.instanceId, parsed.id, event.data.registered_at ?? ''), owner: null } : null;
  },
};

/** A deleted device's push addresses (every one it had) are destroyed. */
export const beamsDeviceDeletedShreds: ShredRule<BeamsDeviceDeleted> = {
  type: 'BeamsDeviceDeleted',
  destroys(_event, stream) {
    const parsed = streamOf(stream, BEAMS_DEVICE_CATEGORY);
    return parsed ? [{ prefix: dataKeyIds.beamsDevice(parsed.instanceId, parsed.id) }] : [];
  },
};

/** A deleted Beams user's devices (their push addresses) and undelivered publishes to them (their notifications), as the delete names them. */
export const beamsUserDeletedShreds: ShredRule<BeamsUserDeleted> = {
  type: 'BeamsUserDeleted',
  destroys(event, stream) {
    const parsed = streamOf(stream, BEAMS_USER_CATEGORY);
    if (!parsed) return [];
    const devices = (event.data.device_ids ?? []).map((id) => dataKeyIds.beamsDevice(parsed.instanceId, id));
    const publishes = (event.data.publish_ids ?? []).map((id) => dataKeyIds.beamsPublish(parsed.instanceId, id));
    return [...(devices.length ? [{ prefixes: devices }] : []), ...(publishes.length ? [{ ids: publishes }] : [])];
  },
};

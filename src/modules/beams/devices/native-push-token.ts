import { badRequest } from '../../../shared/domain/errors';

/** An iOS/macOS device's push address: the APNs device token (hex) and the app's bundle id, the `apns-topic`. */
export interface ApnsAddress {
  readonly token: string;
  readonly bundle_id: string;
}

/** An Android device's push address: its FCM registration token. */
export interface FcmAddress {
  readonly token: string;
}

/** APNs tokens are 32 bytes today; Apple says they may grow, so up to 100 bytes of hex are taken. */
const APNS_TOKEN = /^[0-9a-fA-F]{64,200}$/;
/** Reverse-DNS bundle identifiers (Apple: alphanumerics, hyphens and periods). */
const BUNDLE_ID = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;
const MAX_BUNDLE_ID_LENGTH = 155;
/** FCM registration tokens are opaque URL-safe strings of a few hundred characters. */
const FCM_TOKEN = /^[A-Za-z0-9_:\-.]{20,4096}$/;

/** What push-notifications-swift sends to `POST …/devices/apns`: `{token, bundleIdentifier, metadata}`. */
export function parseApnsRegistration(token: unknown, bundleIdentifier: unknown): ApnsAddress {
  if (typeof token !== 'string' || !APNS_TOKEN.test(token)) {
    throw badRequest('invalid_token', 'The token must be the APNs device token as a hexadecimal string');
  }
  if (typeof bundleIdentifier !== 'string' || bundleIdentifier.length > MAX_BUNDLE_ID_LENGTH || !BUNDLE_ID.test(bundleIdentifier)) {
    throw badRequest('invalid_bundle_identifier', 'bundleIdentifier must be the app’s bundle identifier (e.g. com.example.app)');
  }
  return { token: token.toLowerCase(), bundle_id: bundleIdentifier };
}

/** What push-notifications-android sends to `POST …/devices/fcm` and `PUT …/devices/fcm/<id>/token`: `{token}`. */
export function parseFcmToken(token: unknown): FcmAddress {
  if (typeof token !== 'string' || !FCM_TOKEN.test(token)) {
    throw badRequest('invalid_token', 'The token must be an FCM registration token');
  }
  return { token };
}

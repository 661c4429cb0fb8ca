import type { BeamsPlatform } from '../domain/beams-device.events';

/** What a push service answered for one device. */
export type PushResult =
  | { readonly kind: 'delivered' }
  /** The address is no longer valid (unsubscribed, uninstalled, a bad token): the device is removed. */
  | { readonly kind: 'gone'; readonly why: string }
  /** Worth another attempt after a backoff: 429, 5xx, a network error, an expired provider credential. */
  | { readonly kind: 'retry'; readonly why: string }
  | { readonly kind: 'failed'; readonly why: string };

/**
 * The delivery port: one adapter per push service (Web Push, APNs, FCM). The delivery worker
 * picks the adapter by the device's platform, and owns retries, removals and the record.
 */
export interface PushProvider {
  readonly platform: BeamsPlatform;
  /** False when the deployment has no credentials for this service: its devices are skipped. */
  readonly configured: boolean;
  /** This service's payload for a publish, or null when the publish has none for it (its devices get nothing). */
  payload(instanceId: string, publishId: string, request: Record<string, unknown>): unknown;
  /** One attempt to push `payload` to a device's opened push address (the JSON its registration sealed). */
  send(address: unknown, payload: unknown): Promise<PushResult>;
}

/** DI token of the list of push providers. */
export const PUSH_PROVIDERS = Symbol('PushProviders');

/** The JSON object a publish carries under `key` (`apns`, `fcm`, `web`), or null. */
export const objectUnder = (request: Record<string, unknown>, key: string): Record<string, unknown> | null => {
  const value = request[key];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
};

/** A provider's answer by HTTP status when nothing more specific applies: 429 and 5xx are retried, the rest fail. */
export const byStatus = (status: number, why: string): PushResult =>
  status === 429 || status >= 500 ? { kind: 'retry', why } : { kind: 'failed', why };

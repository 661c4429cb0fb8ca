import { Inject, Injectable } from '@nestjs/common';
import webPush, { WebPushError } from 'web-push';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { SECRET_BOX, SecretBox } from '../../../shared/crypto/secret-box';
import { isAllowedPushHost, type WebPushSubscription } from '../devices/web-push-subscription';
import { byStatus, PushProvider, PushResult } from './push-provider';
import { vapidKeys, VapidKeys } from './vapid-keys';
import { webPushPayload } from './web-push-payload';

const PUSH_TIMEOUT_MS = 10_000;
/** How long a push service keeps a message for an offline browser. */
export const TTL_SECONDS = 4 * 7 * 24 * 3600;

/** Web Push: an encrypted push (aes128gcm, VAPID) through web-push; 404/410 mean the browser unsubscribed. */
@Injectable()
export class WebPushProvider implements PushProvider {
  readonly platform = 'web' as const;
  readonly configured = true;
  private readonly vapid: VapidKeys;
  private readonly allowedHosts: readonly string[];

  constructor(@Inject(CONFIG) config: ParleyConfig, @Inject(SECRET_BOX) box: SecretBox) {
    this.vapid = vapidKeys(config, box);
    this.allowedHosts = config.beamsWebPushHosts;
  }

  /** The key browsers subscribe with (`applicationServerKey`). */
  get vapidPublicKey(): string {
    return this.vapid.publicKey;
  }

  payload(instanceId: string, publishId: string, request: Record<string, unknown>): string | null {
    return webPushPayload(instanceId, publishId, request);
  }

  async send(address: unknown, payload: unknown): Promise<PushResult> {
    const { endpoint } = address as WebPushSubscription;
    // Registration checks the host too; this covers devices registered before BEAMS_WEB_PUSH_HOSTS was narrowed.
    if (!isAllowedPushHost(endpoint, this.allowedHosts)) return { kind: 'failed', why: `${new URL(endpoint).hostname} is not in BEAMS_WEB_PUSH_HOSTS` };
    try {
      await webPush.sendNotification(address as WebPushSubscription, payload as string, {
        vapidDetails: this.vapid,
        TTL: TTL_SECONDS,
        contentEncoding: 'aes128gcm',
        timeout: PUSH_TIMEOUT_MS,
      });
      return { kind: 'delivered' };
    } catch (error) {
      if (!(error instanceof WebPushError)) return { kind: 'retry', why: error instanceof Error ? error.message : String(error) };
      const why = `push service answered ${error.statusCode}`;
      return error.statusCode === 404 || error.statusCode === 410 ? { kind: 'gone', why } : byStatus(error.statusCode, why);
    }
  }
}

import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Agent } from 'node:https';
import { LRUCache } from 'lru-cache';
import type * as WebPush from 'web-push';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { SECRET_BOX, SecretBox } from '../../../shared/crypto/secret-box';
import { isAllowedPushHost, type WebPushSubscription } from '../devices/web-push-subscription';
import { byStatus, PushProvider, PushResult } from './push-provider';
import { vapidKeys, VapidKeys } from './vapid-keys';
import { webPushPayload } from './web-push-payload';
import { messageOf } from '../../../shared/domain/errors';

/**
 * web-push (with its ASN.1, big-number and JWS code) loads at the first Web Push delivery: most
 * servers never make one, and it would stay compiled in the request thread's heap for nothing.
 */
let loaded: typeof WebPush | null = null;
const webPushLibrary = (): typeof WebPush => (loaded ??= require('web-push') as typeof WebPush);

/** Half the default SHUTDOWN_TIMEOUT_MS: a push stuck at a silent push service must not hold a drain past it (a timed-out push is retried). */
const PUSH_TIMEOUT_MS = 5_000;
/** How long a push service keeps a message for an offline browser. */
export const TTL_SECONDS = 4 * 7 * 24 * 3600;
/** A VAPID JWT's lifetime: just under the 24 h RFC 8292 allows (web-push refuses 24 h itself). */
const VAPID_VALID_SECONDS = 24 * 3600 - 60;
/** How long one VAPID JWT is reused for its push service: half its lifetime, so it never reaches one expired. */
const VAPID_REUSE_MS = 12 * 3600 * 1000;
/** Push services (origins) whose VAPID header is kept; browsers use a handful. */
const VAPID_AUDIENCES = 1_000;
/** Connections kept open per push service: the delivery worker's pushes in flight per publish. */
const SOCKETS_PER_PUSH_SERVICE = 50;

/**
 * Web Push: an encrypted push (aes128gcm, VAPID) through web-push; 404/410 mean the browser unsubscribed.
 * The VAPID header (an ES256 signature) is made once per push service and reused, and connections
 * are kept alive: a fan-out to many browsers of one push service pays for neither per push.
 */
@Injectable()
export class WebPushProvider implements PushProvider, OnModuleDestroy {
  readonly platform = 'web' as const;
  readonly configured = true;
  private readonly vapid: VapidKeys;
  private readonly allowedHosts: readonly string[];
  /** `Authorization` headers by audience (the endpoint's origin). */
  private readonly vapidHeaders = new LRUCache<string, string>({ max: VAPID_AUDIENCES, ttl: VAPID_REUSE_MS });
  private readonly agent = new Agent({ keepAlive: true, maxSockets: SOCKETS_PER_PUSH_SERVICE });

  constructor(@Inject(CONFIG) config: ParleyConfig, @Inject(SECRET_BOX) box: SecretBox) {
    this.vapid = vapidKeys(config, box);
    this.allowedHosts = config.beamsWebPushHosts;
  }

  onModuleDestroy(): void {
    this.agent.destroy();
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
    const webPush = webPushLibrary();
    try {
      await webPush.sendNotification(address as WebPushSubscription, payload as string, {
        headers: { Authorization: this.vapidAuthorization(new URL(endpoint).origin) },
        agent: this.agent,
        TTL: TTL_SECONDS,
        contentEncoding: 'aes128gcm',
        timeout: PUSH_TIMEOUT_MS,
      });
      return { kind: 'delivered' };
    } catch (error) {
      if (!(error instanceof webPush.WebPushError)) return { kind: 'retry', why: messageOf(error) };
      const why = `push service answered ${error.statusCode}`;
      return error.statusCode === 404 || error.statusCode === 410 ? { kind: 'gone', why } : byStatus(error.statusCode, why);
    }
  }

  private vapidAuthorization(audience: string): string {
    let authorization = this.vapidHeaders.get(audience);
    if (authorization === undefined) {
      const { publicKey, privateKey, subject } = this.vapid;
      const expiration = Math.floor(Date.now() / 1000) + VAPID_VALID_SECONDS;
      authorization = webPushLibrary().getVapidHeaders(audience, subject, publicKey, privateKey, 'aes128gcm', expiration).Authorization;
      this.vapidHeaders.set(audience, authorization);
    }
    return authorization;
  }
}

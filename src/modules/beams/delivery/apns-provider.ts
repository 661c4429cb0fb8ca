import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { createPrivateKey, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CONFIG, ConfigError, ParleyConfig } from '../../../config/config';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import type { ApnsAddress } from '../devices/native-push-token';
import { Http2Origin } from './http2-origin';
import { byStatus, objectUnder, PushProvider, PushResult } from './push-provider';
import { TTL_SECONDS } from './web-push-provider';

const PUSH_TIMEOUT_MS = 10_000;
/** Apple refuses provider tokens older than an hour and refreshes more often than every 20 minutes. */
const PROVIDER_TOKEN_LIFETIME_MS = 50 * 60_000;
/** APNs reasons that mean the token will never work again (with 410 Unregistered). */
const GONE_REASONS = new Set(['BadDeviceToken', 'Unregistered']);
/** APNs reasons that a fresh provider token cures. */
const PROVIDER_TOKEN_REASONS = new Set(['ExpiredProviderToken', 'InvalidProviderToken']);

/**
 * What an Apple device receives: the publish's `apns` object, with the publish id where the
 * Beams iOS SDK looks for it (`data.pusher.publishId`).
 */
export function apnsPayload(publishId: string, request: Record<string, unknown>): string | null {
  const apns = objectUnder(request, 'apns');
  if (!apns) return null;
  const data = objectUnder(apns, 'data') ?? {};
  return JSON.stringify({ ...apns, data: { ...data, pusher: { publishId } } });
}

/** What every device of one publish is sent: the body, and whether it is a background push. */
interface ApnsPush {
  readonly body: string;
  readonly background: boolean;
}

/**
 * APNs over HTTP/2 with token-based authentication: an ES256 JWT (`iss` team id, `kid` key
 * id, `iat`) signed with the .p8 key, reused for 50 minutes, on `POST /3/device/<token>`.
 */
@Injectable()
export class ApnsProvider implements PushProvider, OnModuleDestroy {
  readonly platform = 'apns' as const;
  readonly configured: boolean;
  private readonly settings?: { key: KeyObject; keyId: string; teamId: string; origin: Http2Origin };
  private providerToken: { jwt: string; issuedAt: number } | null = null;

  constructor(@Inject(CONFIG) config: ParleyConfig, @Inject(CLOCK) private readonly clock: Clock) {
    const apns = config.beamsApns;
    this.configured = apns !== undefined;
    if (!apns) return;
    let key: KeyObject;
    try {
      key = createPrivateKey(readFileSync(apns.keyFile));
    } catch (error) {
      throw new ConfigError(`APNS_KEY_FILE must be a readable .p8 private key, ${apns.keyFile} is not (${(error as Error).message})`);
    }
    if (key.asymmetricKeyType !== 'ec') throw new ConfigError(`APNS_KEY_FILE must hold an EC P-256 key (.p8), ${apns.keyFile} does not`);
    this.settings = { key, keyId: apns.keyId, teamId: apns.teamId, origin: new Http2Origin(`https://${apns.host}`, PUSH_TIMEOUT_MS) };
  }

  onModuleDestroy(): void {
    this.settings?.origin.close();
  }

  /** Built once per publish, not per device. */
  payload(_instanceId: string, publishId: string, request: Record<string, unknown>): ApnsPush | null {
    const body = apnsPayload(publishId, request);
    if (body === null) return null;
    const aps = objectUnder(objectUnder(request, 'apns')!, 'aps');
    // A push with only content-available is a background push: Apple wants that type and priority 5 for it.
    return { body, background: aps?.alert === undefined && aps?.['content-available'] === 1 };
  }

  async send(address: unknown, payload: unknown): Promise<PushResult> {
    const { token, bundle_id } = address as ApnsAddress;
    const { body, background } = payload as ApnsPush;
    const response = await this.settings!.origin.request(
      'POST',
      `/3/device/${token}`,
      {
        authorization: `bearer ${this.jwt()}`,
        'apns-topic': bundle_id,
        'apns-push-type': background ? 'background' : 'alert',
        'apns-priority': background ? '5' : '10',
        'apns-expiration': String(Math.floor(this.clock.now().getTime() / 1000) + TTL_SECONDS),
        'content-type': 'application/json',
      },
      body,
    );
    if (response.status === 200) return { kind: 'delivered' };
    let reason = '';
    try {
      reason = String((JSON.parse(response.body.toString('utf8')) as { reason?: unknown }).reason ?? '');
    } catch {
      // No JSON body (a proxy's error page): the status decides.
    }
    const why = `APNs answered ${response.status}${reason ? ` ${reason}` : ''}`;
    if (response.status === 410 || (response.status === 400 && GONE_REASONS.has(reason))) return { kind: 'gone', why };
    if (response.status === 403 && PROVIDER_TOKEN_REASONS.has(reason)) {
      this.providerToken = null;
      return { kind: 'retry', why };
    }
    return byStatus(response.status, why);
  }

  private jwt(): string {
    const now = this.clock.now().getTime();
    if (!this.providerToken || now - this.providerToken.issuedAt >= PROVIDER_TOKEN_LIFETIME_MS) {
      const { key, keyId, teamId } = this.settings!;
      const token = jwt.sign({ iss: teamId, iat: Math.floor(now / 1000) }, key, { algorithm: 'ES256', keyid: keyId });
      this.providerToken = { jwt: token, issuedAt: now };
    }
    return this.providerToken.jwt;
  }
}

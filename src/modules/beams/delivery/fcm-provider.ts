import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { createPrivateKey, KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CONFIG, ConfigError, ParleyConfig } from '../../../config/config';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import type { FcmAddress } from '../devices/native-push-token';
import { Http2Origin } from './http2-origin';
import { byStatus, objectUnder, PushProvider, PushResult } from './push-provider';

const PUSH_TIMEOUT_MS = 10_000;
export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
/** An access token is replaced this long before Google says it expires. */
const ACCESS_TOKEN_MARGIN_MS = 60_000;
/** Legacy `notification` keys that HTTP v1 keeps at the top level; the rest belong under `android.notification`. */
const TOP_LEVEL_NOTIFICATION_KEYS = new Set(['title', 'body', 'image']);

interface ServiceAccount {
  readonly project_id: string;
  readonly client_email: string;
  readonly token_uri: string;
  readonly key: KeyObject;
}

/**
 * The HTTP v1 `message` (without its token) for a publish's `fcm` object, which Beams takes in
 * the legacy shape (`notification` with Android keys, `data` of any JSON): title, body and
 * image stay in `notification`, the other keys go to `android.notification`, data values become
 * strings (v1 accepts only strings), and `data.pusher` carries the publish id as the Beams
 * Android SDK reads it.
 */
export function fcmMessage(publishId: string, request: Record<string, unknown>): Record<string, unknown> | null {
  const fcm = objectUnder(request, 'fcm');
  if (!fcm) return null;
  // Other keys (v1 `apns`, `webpush`, `fcm_options`) pass through as they are.
  const rest = Object.fromEntries(Object.entries(fcm).filter(([key]) => !['notification', 'data', 'android', 'token', 'topic', 'condition'].includes(key)));
  const notification: Record<string, unknown> = {};
  const androidNotification: Record<string, unknown> = { ...(objectUnder(objectUnder(fcm, 'android') ?? {}, 'notification') ?? {}) };
  for (const [key, value] of Object.entries(objectUnder(fcm, 'notification') ?? {})) {
    (TOP_LEVEL_NOTIFICATION_KEYS.has(key) ? notification : androidNotification)[key] = value;
  }
  const strings: Record<string, string> = {};
  for (const [key, value] of Object.entries(objectUnder(fcm, 'data') ?? {})) strings[key] = typeof value === 'string' ? value : JSON.stringify(value);
  strings.pusher = JSON.stringify({ publishId });
  const androidConfig = { ...(objectUnder(fcm, 'android') ?? {}), ...(Object.keys(androidNotification).length > 0 && { notification: androidNotification }) };
  return {
    ...rest,
    ...(Object.keys(notification).length > 0 && { notification }),
    ...(Object.keys(androidConfig).length > 0 && { android: androidConfig }),
    data: strings,
  };
}

/**
 * FCM HTTP v1: `POST /v1/projects/<project>/messages:send` with an OAuth2 access token that a
 * service account obtains (an RS256 JWT grant to its `token_uri`), cached until it expires.
 */
@Injectable()
export class FcmProvider implements PushProvider, OnModuleDestroy {
  readonly platform = 'fcm' as const;
  readonly configured: boolean;
  private readonly account?: ServiceAccount;
  private readonly origin?: Http2Origin;
  private accessToken: Promise<{ token: string; expiresAt: number }> | null = null;

  constructor(@Inject(CONFIG) config: ParleyConfig, @Inject(CLOCK) private readonly clock: Clock) {
    const fcm = config.beamsFcm;
    this.configured = fcm !== undefined;
    if (!fcm) return;
    this.account = readServiceAccount(fcm.serviceAccountFile);
    this.origin = new Http2Origin(`https://${fcm.host}`, PUSH_TIMEOUT_MS);
  }

  onModuleDestroy(): void {
    this.origin?.close();
  }

  payload(_instanceId: string, publishId: string, request: Record<string, unknown>): Record<string, unknown> | null {
    return fcmMessage(publishId, request);
  }

  async send(address: unknown, payload: unknown): Promise<PushResult> {
    const { token } = address as FcmAddress;
    let accessToken: string;
    try {
      accessToken = await this.token();
    } catch (error) {
      return { kind: 'retry', why: `no FCM access token: ${(error as Error).message}` };
    }
    const response = await this.origin!.request(
      'POST',
      `/v1/projects/${encodeURIComponent(this.account!.project_id)}/messages:send`,
      { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json; charset=utf-8' },
      JSON.stringify({ message: { ...(payload as Record<string, unknown>), token } }),
    );
    if (response.status === 200) return { kind: 'delivered' };
    const error = parseFcmError(response.body);
    const why = `FCM answered ${response.status}${error.status ? ` ${error.status}` : ''}${error.errorCode ? `/${error.errorCode}` : ''}`;
    if (error.errorCode === 'UNREGISTERED' || (response.status === 400 && error.aboutToken)) return { kind: 'gone', why };
    if (response.status === 401) {
      this.accessToken = null; // revoked or expired early: the retry fetches a new one
      return { kind: 'retry', why };
    }
    return byStatus(response.status, why);
  }

  /** The cached access token, or one in flight, or a new grant. */
  private token(): Promise<string> {
    const now = this.clock.now().getTime();
    const cached = this.accessToken;
    if (cached) {
      return cached.then((t) => {
        if (t.expiresAt > this.clock.now().getTime()) return t.token;
        if (this.accessToken === cached) this.accessToken = null;
        return this.token();
      });
    }
    const grant = this.grant(now);
    this.accessToken = grant;
    grant.catch(() => {
      if (this.accessToken === grant) this.accessToken = null;
    });
    return grant.then((t) => t.token);
  }

  private async grant(now: number): Promise<{ token: string; expiresAt: number }> {
    const { client_email, token_uri, key } = this.account!;
    const iat = Math.floor(now / 1000);
    const assertion = jwt.sign({ iss: client_email, scope: FCM_SCOPE, aud: token_uri, iat, exp: iat + 3600 }, key, { algorithm: 'RS256' });
    const response = await fetch(token_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      signal: AbortSignal.timeout(PUSH_TIMEOUT_MS),
    });
    const body = (await response.json().catch(() => ({}))) as { access_token?: unknown; expires_in?: unknown; error?: unknown };
    if (!response.ok || typeof body.access_token !== 'string') {
      throw new Error(`${token_uri} answered ${response.status}${typeof body.error === 'string' ? ` ${body.error}` : ''}`);
    }
    const lifetimeMs = (typeof body.expires_in === 'number' ? body.expires_in : 3600) * 1000;
    return { token: body.access_token, expiresAt: now + Math.max(0, lifetimeMs - ACCESS_TOKEN_MARGIN_MS) };
  }
}

function readServiceAccount(file: string): ServiceAccount {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`FCM_SERVICE_ACCOUNT_FILE must be a readable service account JSON file, ${file} is not (${(error as Error).message})`);
  }
  const { project_id, client_email, private_key, token_uri } = json;
  if ([project_id, client_email, private_key, token_uri].some((v) => typeof v !== 'string' || v === '')) {
    throw new ConfigError(`FCM_SERVICE_ACCOUNT_FILE ${file} lacks project_id, client_email, private_key or token_uri`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(private_key as string);
  } catch (error) {
    throw new ConfigError(`FCM_SERVICE_ACCOUNT_FILE ${file}: private_key is not a PEM private key (${(error as Error).message})`);
  }
  return { project_id: project_id as string, client_email: client_email as string, token_uri: token_uri as string, key };
}

/** The parts of a google.rpc.Status error body that decide what to do. */
function parseFcmError(body: Buffer): { status?: string; errorCode?: string; aboutToken: boolean } {
  try {
    const error = (JSON.parse(body.toString('utf8')) as { error?: { status?: string; message?: string; details?: Record<string, unknown>[] } }).error;
    const details = error?.details ?? [];
    const errorCode = details.find((d) => typeof d.errorCode === 'string')?.errorCode as string | undefined;
    const violations = details.flatMap((d) => (Array.isArray(d.fieldViolations) ? (d.fieldViolations as { field?: string }[]) : []));
    const aboutToken =
      error?.status === 'INVALID_ARGUMENT' &&
      (violations.some((v) => v.field === 'message.token') || /registration token/i.test(error.message ?? ''));
    return { status: error?.status, errorCode, aboutToken };
  } catch {
    return { aboutToken: false };
  }
}

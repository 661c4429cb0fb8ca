import { hmacKey, signHs256 } from './jwt';

/**
 * What the operator signed in with. The secrets stay in this tab (sessionStorage: gone when the
 * tab closes) and are used only to sign short tokens here; no request carries them.
 */
export interface InstanceCredential {
  readonly locator: string;
  readonly instanceId: string;
  readonly keyId: string;
  readonly secret: string;
  /** The console user, recorded as the actor's `console_user` of every change. */
  readonly name: string;
}

export interface DeploymentCredential {
  readonly secret: string;
  readonly name: string;
}

export interface Credentials {
  readonly instance?: InstanceCredential;
  readonly deployment?: DeploymentCredential;
}

/** Tokens live 15 minutes (the contract's `exp: iat + 900`) and are minted anew after 10. */
export const TOKEN_LIFETIME_SECONDS = 900;
const REUSE_SECONDS = 600;
/** What `console_user` may hold (the server checks the same). */
export const CONSOLE_USER_PATTERN = /^[A-Za-z0-9 ._@-]{1,64}$/;

export class CredentialError extends Error {}

/** `v1:<cluster>:<instance id>`, as the dashboards showed it; the instance id is its last part. */
export function parseLocator(locator: string): string {
  const parts = locator.trim().split(':');
  if (parts.length !== 3 || !parts[2]) {
    throw new CredentialError('The instance locator looks like v1:<cluster>:<instance id>');
  }
  return parts[2];
}

/** `<key id>:<secret>`; the secret may itself hold colons. */
export function parseKey(key: string): { keyId: string; secret: string } {
  const at = key.indexOf(':');
  if (at <= 0 || at === key.length - 1) throw new CredentialError('The key looks like <key id>:<secret>');
  return { keyId: key.slice(0, at), secret: key.slice(at + 1) };
}

export function checkName(name: string): string {
  const trimmed = name.trim();
  if (!CONSOLE_USER_PATTERN.test(trimmed)) {
    throw new CredentialError('Your name: 1 to 64 letters, digits, spaces and . _ @ -');
  }
  return trimmed;
}

const STORAGE_KEY = 'parley-console-credentials';

export function loadCredentials(): Credentials {
  try {
    const stored = sessionStorage.getItem(STORAGE_KEY);
    return stored ? (JSON.parse(stored) as Credentials) : {};
  } catch {
    return {};
  }
}

export function saveCredentials(credentials: Credentials): void {
  if (!credentials.instance && !credentials.deployment) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credentials));
}

interface Minted {
  readonly token: string;
  readonly until: number;
}

/** Mints and reuses the short tokens of one credential (one per claim set). */
export class TokenMinter {
  private key: Promise<CryptoKey> | undefined;
  private readonly minted = new Map<string, Minted>();

  constructor(
    private readonly secret: string,
    private readonly claimsAt: (iat: number, extra: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ) {}

  async token(extra: Readonly<Record<string, unknown>> = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const cacheKey = JSON.stringify(extra);
    const kept = this.minted.get(cacheKey);
    if (kept && kept.until > now) return kept.token;
    this.key ??= hmacKey(this.secret);
    const token = await signHs256(this.claimsAt(now, extra), await this.key);
    if (this.minted.size > 100) this.minted.clear();
    this.minted.set(cacheKey, { token, until: now + REUSE_SECONDS });
    return token;
  }
}

/** su tokens of an instance, as an SDK mints them; `sub` to act as a user ("send as"). */
export function instanceMinter(credential: InstanceCredential): TokenMinter {
  return new TokenMinter(credential.secret, (iat, extra) => ({
    instance: credential.instanceId,
    iss: `api_keys/${credential.keyId}`,
    su: true,
    console_user: credential.name,
    iat,
    exp: iat + TOKEN_LIFETIME_SECONDS,
    ...extra,
  }));
}

/** Feeds tokens name the instance in `app` and grant a path and action (pusher-feeds-server's shape). */
export function feedsMinter(credential: InstanceCredential): TokenMinter {
  return new TokenMinter(credential.secret, (iat) => ({
    app: credential.instanceId,
    iss: `api_keys/${credential.keyId}`,
    su: true,
    console_user: credential.name,
    feeds: { permission: { path: '*', action: '*' } },
    iat,
    exp: iat + TOKEN_LIFETIME_SECONDS,
  }));
}

/** Deployment tokens: signed with CONSOLE_ADMIN_SECRET, `iss: parley_console`, the console user as `sub`. */
export function deploymentMinter(credential: DeploymentCredential): TokenMinter {
  return new TokenMinter(credential.secret, (iat) => ({ iss: 'parley_console', sub: credential.name, iat, exp: iat + TOKEN_LIFETIME_SECONDS }));
}

import { resolve } from 'node:path';

/** Every setting Parley reads, from the environment (see the README's configuration table). */
export interface ParleyConfig {
  readonly port: number;
  readonly host: string;
  readonly httpsPort?: number;
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  /**
   * The scheme, host and port clients reach this server at, for links it hands out (attachment
   * downloads, uploads). Unset: `https://localhost:<HTTPS port>` when HTTPS is on, otherwise
   * `http://localhost:<PORT>` (the ports actually listened on).
   */
  readonly publicUrl?: string;
  readonly dataDir: string;
  readonly eventStoreConnectionString?: string;
  readonly mongodbUri?: string;
  readonly mongodbDatabase: string;
  readonly masterKey?: string;
  readonly bootstrap?: {
    readonly instanceId: string;
    readonly cluster: string;
    readonly keyId?: string;
    readonly keySecret?: string;
    readonly tokenProviderEnabled: boolean;
  };
  readonly logLevel: string;
  /** How long a write waits for separate projector workers before answering 503. */
  readonly readYourWritesTimeoutMs: number;
  /** Gap between `[0, …]` keep-alive frames on SUBSCRIBE streams (at most 30 s). */
  readonly keepAliveMs: number;
}

export class ConfigError extends Error {}

const int = (name: string, value: string | undefined, fallback?: number): number | undefined => {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`${name} must be a port number, got "${value}"`);
  return n;
};

export function loadConfig(env: NodeJS.ProcessEnv = process.env): ParleyConfig {
  const httpsPort = int('HTTPS_PORT', env.HTTPS_PORT);
  if (httpsPort !== undefined && (!env.TLS_CERT_FILE || !env.TLS_KEY_FILE)) {
    throw new ConfigError('HTTPS_PORT needs TLS_CERT_FILE and TLS_KEY_FILE');
  }
  let bootstrap: ParleyConfig['bootstrap'];
  if (env.INSTANCE_LOCATOR) {
    const parts = env.INSTANCE_LOCATOR.split(':');
    if (parts.length !== 3 || !parts[2]) {
      throw new ConfigError(`INSTANCE_LOCATOR must look like v1:<cluster>:<instance_id>, got "${env.INSTANCE_LOCATOR}"`);
    }
    let keyId: string | undefined;
    let keySecret: string | undefined;
    if (env.INSTANCE_KEY) {
      const m = /^([^:]+):(.+)$/.exec(env.INSTANCE_KEY);
      if (!m) throw new ConfigError('INSTANCE_KEY must look like <key_id>:<secret>');
      [, keyId, keySecret] = m;
    }
    bootstrap = {
      cluster: parts[1],
      instanceId: parts[2],
      keyId,
      keySecret,
      tokenProviderEnabled: env.TOKEN_PROVIDER_ENABLED === 'true',
    };
  } else if (env.INSTANCE_KEY) {
    throw new ConfigError('INSTANCE_KEY needs INSTANCE_LOCATOR');
  }
  let publicUrl: string | undefined;
  if (env.PUBLIC_URL) {
    let url: URL;
    try {
      url = new URL(env.PUBLIC_URL);
    } catch {
      throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${env.PUBLIC_URL}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${env.PUBLIC_URL}"`);
    }
    publicUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  }
  return {
    port: int('PORT', env.PORT, 8080)!,
    host: env.HOST || '0.0.0.0',
    httpsPort,
    tlsCertFile: env.TLS_CERT_FILE,
    tlsKeyFile: env.TLS_KEY_FILE,
    publicUrl,
    dataDir: resolve(env.DATA_DIR || './data'),
    eventStoreConnectionString: env.EVENTSTORE_CONNECTION_STRING || undefined,
    mongodbUri: env.MONGODB_URI || undefined,
    mongodbDatabase: env.MONGODB_DATABASE || 'parley',
    masterKey: env.MASTER_KEY || undefined,
    bootstrap,
    logLevel: env.LOG_LEVEL || 'info',
    readYourWritesTimeoutMs: Number(env.READ_YOUR_WRITES_TIMEOUT_MS || 5000),
    keepAliveMs: Math.min(Number(env.KEEPALIVE_INTERVAL_MS || 15000), 30000),
  };
}

export const CONFIG = Symbol('ParleyConfig');

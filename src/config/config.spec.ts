import { ConfigError, loadConfig } from './config';

const KEY = Buffer.alloc(32, 9).toString('base64');

describe('loadConfig', () => {
  it('has working defaults for every number', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      httpsPort: undefined,
      readYourWritesTimeoutMs: 5_000,
      keepAliveMs: 15_000,
      shutdownTimeoutMs: 10_000,
      orphanBlobGraceMs: 3_600_000,
      logLevel: 'info',
      masterKey: undefined,
    });
  });

  it('reads whole numbers within their range, ignoring surrounding spaces', () => {
    const config = loadConfig({
      PORT: '0',
      HTTPS_PORT: ' 8443 ',
      TLS_CERT_FILE: 'c',
      TLS_KEY_FILE: 'k',
      READ_YOUR_WRITES_TIMEOUT_MS: '250',
      KEEPALIVE_INTERVAL_MS: '30000',
      SHUTDOWN_TIMEOUT_MS: '100',
    });
    expect(config).toMatchObject({ port: 0, httpsPort: 8443, readYourWritesTimeoutMs: 250, keepAliveMs: 30_000, shutdownTimeoutMs: 100 });
  });

  it('keeps idempotency keys 24 hours unless IDEMPOTENCY_KEY_TTL_HOURS says otherwise (fractions allowed)', () => {
    expect(loadConfig({}).idempotencyKeyTtlMs).toBe(86_400_000);
    expect(loadConfig({ IDEMPOTENCY_KEY_TTL_HOURS: ' 48 ' }).idempotencyKeyTtlMs).toBe(172_800_000);
    expect(loadConfig({ IDEMPOTENCY_KEY_TTL_HOURS: '0.001' }).idempotencyKeyTtlMs).toBe(3_600);
  });

  // Each bad value stops the start with the variable's name, what it accepts, and what it got.
  it.each([
    ['PORT', 'abc', /^PORT must be a port number from 0 to 65535, got "abc"$/],
    ['PORT', '65536', /^PORT must be a port number from 0 to 65535, got "65536"$/],
    ['PORT', '-1', /^PORT must be a port number/],
    ['PORT', '80.5', /^PORT must be a port number/],
    ['HTTPS_PORT', '0x50', /^HTTPS_PORT must be a port number from 0 to 65535, got "0x50"$/],
    ['READ_YOUR_WRITES_TIMEOUT_MS', 'abc', /^READ_YOUR_WRITES_TIMEOUT_MS must be a whole number of milliseconds from 1 to 600000, got "abc"$/],
    ['READ_YOUR_WRITES_TIMEOUT_MS', '0', /^READ_YOUR_WRITES_TIMEOUT_MS must be a whole number of milliseconds from 1 to/],
    ['READ_YOUR_WRITES_TIMEOUT_MS', '5s', /^READ_YOUR_WRITES_TIMEOUT_MS must be/],
    ['KEEPALIVE_INTERVAL_MS', 'abc', /^KEEPALIVE_INTERVAL_MS must be a whole number of milliseconds from 100 to 30000, got "abc"$/],
    ['KEEPALIVE_INTERVAL_MS', '1', /^KEEPALIVE_INTERVAL_MS must be a whole number of milliseconds from 100 to 30000/],
    ['KEEPALIVE_INTERVAL_MS', '60000', /^KEEPALIVE_INTERVAL_MS must be/],
    ['SHUTDOWN_TIMEOUT_MS', 'soon', /^SHUTDOWN_TIMEOUT_MS must be a whole number of milliseconds from 100 to 600000, got "soon"$/],
    ['SHUTDOWN_TIMEOUT_MS', '1e4', /^SHUTDOWN_TIMEOUT_MS must be/],
    ['REQUEST_TIMEOUT_MS', '0', /^REQUEST_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 3600000, got "0"$/],
    ['REQUEST_TIMEOUT_MS', '5m', /^REQUEST_TIMEOUT_MS must be/],
    ['ORPHAN_BLOB_GRACE_MS', '1h', /^ORPHAN_BLOB_GRACE_MS must be a whole number of milliseconds from 1000 to 2592000000, got "1h"$/],
    ['ORPHAN_BLOB_GRACE_MS', '0', /^ORPHAN_BLOB_GRACE_MS must be/],
    ['STORAGE_LOW_SPACE_BYTES', '1GB', /^STORAGE_LOW_SPACE_BYTES must be a whole number of bytes from 0 to \d+, got "1GB"$/],
    ['IDEMPOTENCY_KEY_TTL_HOURS', '0', /^IDEMPOTENCY_KEY_TTL_HOURS must be a number of hours from 0.0003 to 8760, got "0"$/],
    ['IDEMPOTENCY_KEY_TTL_HOURS', '1d', /^IDEMPOTENCY_KEY_TTL_HOURS must be a number of hours/],
    ['IDEMPOTENCY_KEY_TTL_HOURS', '-1', /^IDEMPOTENCY_KEY_TTL_HOURS must be a number of hours/],
    ['TOKEN_PROVIDER_ENABLED', 'yes', /^TOKEN_PROVIDER_ENABLED must be true or false, got "yes"$/],
    ['RATE_LIMIT_SU', '1', /^RATE_LIMIT_SU must be true or false, got "1"$/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"$/],
    ['MASTER_KEY', 'c2hvcnQ=', /^MASTER_KEY must be 32 random bytes in base64 \(openssl rand -base64 32\)$/],
    ['MASTER_KEY', `${KEY.slice(0, -2)}!!`, /^MASTER_KEY must be 32 random bytes/],
    ['CORS_ORIGINS', 'app.example.com', /^CORS_ORIGINS must be \*, none or a comma-separated list of origins .*got "app.example.com"$/],
    ['CORS_ORIGINS', 'https://app.example.com/chat', /^CORS_ORIGINS must be/],
    ['CORS_ORIGINS', 'ftp://app.example.com', /^CORS_ORIGINS must be/],
    ['CORS_ORIGINS', 'https://a.example.com,*', /^CORS_ORIGINS must be/],
    ['WEBHOOK_ALLOWED_HOSTS', 'hooks.internal,http://x.example', /^WEBHOOK_ALLOWED_HOSTS must be a comma-separated list of host names, IP addresses and CIDR ranges.*got "http:\/\/x.example"$/],
    ['WEBHOOK_ALLOWED_HOSTS', '10.0.0.0/40', /^WEBHOOK_ALLOWED_HOSTS must be/],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '10s,30s', /^WEBHOOK_RETRY_SCHEDULE_MS must be a comma-separated list of up to 20 whole numbers of milliseconds from 0 to 86400000, got "10s,30s"$/],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '100,,200', /^WEBHOOK_RETRY_SCHEDULE_MS must be/],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '86400001', /^WEBHOOK_RETRY_SCHEDULE_MS must be/],
    ['WEBHOOK_DELIVERY_TIMEOUT_MS', '50', /^WEBHOOK_DELIVERY_TIMEOUT_MS must be a whole number of milliseconds from 100 to 600000, got "50"$/],
    ['CONSOLE_ENABLED', 'on', /^CONSOLE_ENABLED must be true or false, got "on"$/],
    ['CONSOLE_ADMIN_SECRET', 'x'.repeat(31), /^CONSOLE_ADMIN_SECRET must be at least 32 characters without surrounding spaces \(openssl rand -base64 32\), got 31$/],
    ['CONSOLE_ADMIN_SECRET', ` ${'x'.repeat(40)}`, /^CONSOLE_ADMIN_SECRET must be at least 32 characters/],
  ])('%s=%s is refused', (name, value, message) => {
    const env = { [name]: value, ...(name === 'HTTPS_PORT' && { TLS_CERT_FILE: 'c', TLS_KEY_FILE: 'k' }) };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("reads the webhook retry schedule: Chatkit's by default, a comma list, or none", () => {
    expect(loadConfig({})).toMatchObject({ webhookRetryScheduleMs: [10_000, 30_000, 120_000, 300_000], webhookDeliveryTimeoutMs: 10_000 });
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: ' 100, 200 ,0', WEBHOOK_DELIVERY_TIMEOUT_MS: '500' })).toMatchObject({
      webhookRetryScheduleMs: [100, 200, 0],
      webhookDeliveryTimeoutMs: 500,
    });
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_MS: '' }).webhookRetryScheduleMs).toEqual([]);
  });

  it('keeps the console off without CONSOLE_ENABLED=true, and never repeats a refused CONSOLE_ADMIN_SECRET', () => {
    expect(loadConfig({})).toMatchObject({ consoleEnabled: false, consoleAdminSecret: undefined });
    const secret = 'y'.repeat(32);
    expect(loadConfig({ CONSOLE_ENABLED: 'true', CONSOLE_ADMIN_SECRET: secret })).toMatchObject({ consoleEnabled: true, consoleAdminSecret: secret });
    const bad = 'short-but-secret';
    expect(() => loadConfig({ CONSOLE_ADMIN_SECRET: bad })).toThrow(expect.objectContaining({ message: expect.not.stringContaining(bad) }));
  });

  it('never repeats a refused MASTER_KEY in its message', () => {
    const bad = 'not-a-key-but-maybe-a-secret';
    expect(() => loadConfig({ MASTER_KEY: bad })).toThrow(expect.objectContaining({ message: expect.not.stringContaining(bad) }));
  });

  it('takes a well-formed MASTER_KEY as given (trailing newline of a key file trimmed)', () => {
    expect(loadConfig({ MASTER_KEY: `${KEY}\n` }).masterKey).toBe(KEY);
  });

  it('reads CORS_ORIGINS: any origin by default, none, or a list of origins', () => {
    expect(loadConfig({}).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: 'none' }).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com/, http://localhost:3000' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
    ]);
  });
});

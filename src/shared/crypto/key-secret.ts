/**
 * The fewest bytes an instance key's secret may have. The secret is the HMAC key of every
 * access token (HS256) and the Beams server SDKs' bearer secret: a short one is guessed
 * offline from any token. This floor refuses the placeholders people type (`secret`,
 * `password`, `changeme`, `my-secret`); it cannot make a chosen word random, so the README
 * asks for 32 random bytes, as `key:create` generates when given no secret.
 */
export const MIN_KEY_SECRET_BYTES = 10;

/** Why a secret of `bytes` bytes is too short to be a secret, or null when it is long enough. */
export function keySecretShortfall(bytes: number): string | null {
  if (bytes >= MIN_KEY_SECRET_BYTES) return null;
  return (
    `a key secret needs at least ${MIN_KEY_SECRET_BYTES} bytes, this one has ${bytes}; ` +
    'use random text such as `openssl rand -base64 32` prints, or let `npm run admin -- key:create` generate one'
  );
}

/** Why `secret` is too short to be a secret, or null when it is long enough. */
export const keySecretTooShort = (secret: string): string | null => keySecretShortfall(Buffer.byteLength(secret, 'utf8'));

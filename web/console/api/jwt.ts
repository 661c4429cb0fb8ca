/**
 * HS256 JSON Web Tokens signed in the browser with WebCrypto, as the server SDKs sign them: the
 * key secret is imported as a non-extractable HMAC key and never leaves the page.
 */
const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const encodeJson = (value: unknown) => base64url(encoder.encode(JSON.stringify(value)));

/** A signing key for `secret` (imported once per credential; not extractable). */
export function hmacKey(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

export async function signHs256(claims: Readonly<Record<string, unknown>>, key: CryptoKey): Promise<string> {
  const unsigned = `${encodeJson({ alg: 'HS256', typ: 'JWT' })}.${encodeJson(claims)}`;
  const signature = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(unsigned)));
  return `${unsigned}.${base64url(signature)}`;
}

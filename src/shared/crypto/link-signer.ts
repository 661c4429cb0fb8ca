import { createHmac, timingSafeEqual } from 'node:crypto';

export type LinkCheck = 'valid' | 'expired' | 'invalid';

/** The query of a signed link: `expires` (Unix seconds) is absent on links that never expire. */
export interface LinkQuery {
  readonly expires?: string;
  readonly sig: string;
}

/**
 * Signs links that need no Authorization header (uploads and downloads): an HMAC-SHA256 over
 * the method, the path and the expiry, under a key derived from the master key. Changing any
 * of the three (or dropping the expiry) breaks the signature. The host is not signed, so a
 * link works under every name the server is reached by.
 */
export class LinkSigner {
  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new Error('A link signing key has at least 32 bytes');
  }

  private mac(method: string, path: string, expires: number | null): Buffer {
    return createHmac('sha256', this.key)
      .update(`${method.toUpperCase()}\n${path}\n${expires === null ? 'never' : String(expires)}`)
      .digest();
  }

  sign(method: string, path: string, expires: number | null): LinkQuery {
    const sig = this.mac(method, path, expires).toString('base64url');
    return expires === null ? { sig } : { expires: String(expires), sig };
  }

  /** `path?expires=…&sig=…` */
  signedPath(method: string, path: string, expires: number | null): string {
    const q = this.sign(method, path, expires);
    return `${path}?${new URLSearchParams(q as unknown as Record<string, string>).toString()}`;
  }

  /** The signature is checked first, so an expired link tells nothing unless it was genuine. */
  check(method: string, path: string, query: { expires?: unknown; sig?: unknown }, nowSeconds: number): LinkCheck {
    const { expires, sig } = query;
    if (typeof sig !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return 'invalid';
    let at: number | null = null;
    if (expires !== undefined) {
      if (typeof expires !== 'string' || !/^[0-9]{1,12}$/.test(expires)) return 'invalid';
      at = Number(expires);
    }
    const expected = this.mac(method, path, at);
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    if (at !== null && at <= nowSeconds) return 'expired';
    return 'valid';
  }
}

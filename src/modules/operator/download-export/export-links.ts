import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { CLOCK } from '../../../shared/application/tokens';
import { LinkSigner } from '../../../shared/crypto/link-signer';
import { SECRET_BOX, SecretBox } from '../../../shared/crypto/secret-box';
import { Clock } from '../../../shared/domain/clock';
import { consoleUserProblem } from '../../../shared/domain/console-user';
import { forbidden } from '../../../shared/domain/errors';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

/** How long an export download link works: long enough for a browser to follow it, short enough to be worthless in a history or a log. */
export const EXPORT_LINK_TTL_SECONDS = 60;

export const EXPORT_ARCHIVE_ROUTE = 'instances/:instanceId/export/archive';

const archivePath = (instanceId: string) => `/${PARLEY_OPERATOR_ROUTE}/instances/${encodeURIComponent(instanceId)}/export/archive`;

export interface ExportLink {
  /** A path of this server with the link's query: `…/export/archive?by=&nonce=&expires=&sig=`. */
  readonly url: string;
  readonly expiresAt: Date;
}

/**
 * Download links of instance archives, for a browser that follows a link (which carries no
 * Authorization header): signed (HMAC under a key derived from the master key) over the
 * instance, the console user who asked and a nonce, expiring after a minute, and taken once.
 * A link is a bearer secret: it is never logged (the access log names route patterns only).
 */
@Injectable()
export class ExportLinks {
  private readonly signer: LinkSigner;
  /** Nonces of links already followed, until they expire. */
  private readonly taken = new Map<string, number>();

  constructor(@Inject(SECRET_BOX) secretBox: SecretBox, @Inject(CLOCK) private readonly clock: Clock) {
    this.signer = new LinkSigner(secretBox.deriveKey('export-links'));
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  private static signed(instanceId: string, by: string, nonce: string): string {
    return `${archivePath(instanceId)}\nby=${by}\nnonce=${nonce}`;
  }

  mint(instanceId: string, consoleUser: string): ExportLink {
    const nonce = randomBytes(16).toString('base64url');
    const expires = this.nowSeconds() + EXPORT_LINK_TTL_SECONDS;
    const { sig } = this.signer.sign('GET', ExportLinks.signed(instanceId, consoleUser, nonce), expires);
    const query = new URLSearchParams({ by: consoleUser, nonce, expires: String(expires), sig });
    return { url: `${archivePath(instanceId)}?${query.toString()}`, expiresAt: new Date(expires * 1000) };
  }

  /** The console user a valid, unexpired, not yet followed link of this instance was minted for (403 otherwise); the link is spent. */
  redeem(instanceId: string, query: unknown): string {
    const { by, nonce, expires, sig } = (query ?? {}) as Record<string, unknown>;
    const now = this.nowSeconds();
    const wellFormed = typeof by === 'string' && !consoleUserProblem(by) && typeof nonce === 'string' && /^[A-Za-z0-9_-]{22}$/.test(nonce);
    const result = wellFormed ? this.signer.check('GET', ExportLinks.signed(instanceId, by, nonce), { expires, sig }, now) : 'invalid';
    if (result === 'invalid') throw forbidden('invalid_link', 'This download link is not one this server signed for this instance, or was altered');
    if (result === 'expired' || expires === undefined) throw forbidden('link_expired', 'This download link has expired: ask for a new one');
    for (const [taken, until] of this.taken) if (until <= now) this.taken.delete(taken);
    if (this.taken.has(nonce as string)) throw forbidden('link_used', 'This download link was followed already: ask for a new one');
    this.taken.set(nonce as string, Number(expires));
    return by as string;
  }
}

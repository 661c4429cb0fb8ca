import { SecretBox } from '../../../shared/crypto/secret-box';
import { Clock } from '../../../shared/domain/clock';
import { forbidden } from '../../../shared/domain/errors';
import { LinkSigner } from '../../../shared/crypto/link-signer';

/** How long upload and download links work: an hour, rounded up to the next 5 minutes (so repeated reads share a URL). */
export const LINK_TTL_SECONDS = 3600;
const ROUND_SECONDS = 300;

export const UPLOAD_ROUTE = '/attachments/upload/:instanceId/:attachmentId';
export const DOWNLOAD_ROUTE = '/attachments/download/:instanceId/:attachmentId';

const path = (kind: 'upload' | 'download', instanceId: string, attachmentId: string) =>
  `/attachments/${kind}/${encodeURIComponent(instanceId)}/${encodeURIComponent(attachmentId)}`;

export interface SignedLink {
  readonly url: string;
  /** When it stops working; null for links that do not expire. */
  readonly expiresAt: Date | null;
}

/**
 * The signed, absolute links of attachments, and their verification. A plain class (the module
 * builds it): the embedded server's projector thread renders links too, and loads no Nest package.
 */
export class AttachmentLinks {
  private readonly signer: LinkSigner;

  constructor(secretBox: SecretBox, private readonly clock: Clock) {
    this.signer = new LinkSigner(secretBox.deriveKey('attachment-links'));
  }

  private expiry(): number {
    const now = Math.floor(this.clock.now().getTime() / 1000);
    return Math.ceil((now + LINK_TTL_SECONDS) / ROUND_SECONDS) * ROUND_SECONDS;
  }

  private link(origin: string, method: 'GET' | 'PUT', p: string, expires: number | null): SignedLink {
    return {
      url: origin + this.signer.signedPath(method, p, expires),
      expiresAt: expires === null ? null : new Date(expires * 1000),
    };
  }

  /** Where the bytes of an announced attachment are PUT, without Authorization. */
  upload(origin: string, instanceId: string, attachmentId: string): SignedLink {
    return this.link(origin, 'PUT', path('upload', instanceId, attachmentId), this.expiry());
  }

  /** A download link that expires; `permanent` ones (files API links kept in v2 messages) work until the file is deleted. */
  download(origin: string, instanceId: string, attachmentId: string, options: { permanent?: boolean } = {}): SignedLink {
    return this.link(origin, 'GET', path('download', instanceId, attachmentId), options.permanent ? null : this.expiry());
  }

  /** The v6 route a client calls for a fresh download link. */
  refresh(origin: string, instanceId: string, roomId: string, attachmentId: string): string {
    return `${origin}/services/chatkit/v6/${encodeURIComponent(instanceId)}/rooms/${encodeURIComponent(roomId)}/attachments/${encodeURIComponent(attachmentId)}`;
  }

  /** Throws 403 unless the query signs this method and path and has not expired. */
  verify(method: 'GET' | 'PUT', kind: 'upload' | 'download', instanceId: string, attachmentId: string, query: unknown): void {
    const q = (query ?? {}) as { expires?: unknown; sig?: unknown };
    const nowSeconds = Math.floor(this.clock.now().getTime() / 1000);
    const result = this.signer.check(method, path(kind, instanceId, attachmentId), q, nowSeconds);
    if (result === 'expired') throw forbidden('link_expired', 'This link has expired; ask for a new one');
    if (result === 'invalid') throw forbidden('invalid_signature', 'This link is not signed by this server, or was altered');
  }
}

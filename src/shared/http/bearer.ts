/**
 * The credential of `Authorization: Bearer <credential>`, or null when the header is absent,
 * of another scheme, or carries nothing. The scheme is case-insensitive (RFC 9110 §11.1).
 * Chat tokens are read by passport-jwt's own extractor; this serves the Beams secret key, the
 * Feeds token and the metrics token.
 */
export function bearerCredential(header: string | undefined): string | null {
  const credential = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1].trim();
  return credential ? credential : null;
}

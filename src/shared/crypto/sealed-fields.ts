import { createCipheriv, createDecipheriv } from 'node:crypto';
import { randomFromPool } from './random-pool';

/**
 * Personal fields of an event as the log holds them: AES-256-GCM under a data key, the key's
 * id bound in as associated data (a sealed form moved onto another key's id does not open).
 */
export interface SealedFields {
  /** The data key's id. */
  readonly k: string;
  readonly iv: string;
  readonly tag: string;
  readonly ct: string;
}

const IV_BYTES = 12;

/** `plaintext`: the fields as JSON. */
export function sealFields(keyId: string, key: Buffer, plaintext: string): SealedFields {
  const iv = randomFromPool(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const ct = cipher.update(plaintext, 'utf8');
  // GCM is a stream mode: final() only computes the tag, it holds back no ciphertext.
  const rest = cipher.final();
  return {
    k: keyId,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ct: rest.length === 0 ? ct.toString('base64') : Buffer.concat([ct, rest]).toString('base64'),
  };
}

/** The fields sealed, as JSON, or null when `key` does not open them (not the key they were sealed with). */
export function openFields(sealed: SealedFields, key: Buffer): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(sealed.k, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

export const isSealedFields = (value: unknown): value is SealedFields =>
  typeof value === 'object' && value !== null && typeof (value as SealedFields).k === 'string' && typeof (value as SealedFields).ct === 'string';

import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
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

/** Separates the key ids of a text sealed under several keys (ids are URI-encoded segments: never a line break). */
const KEY_ID_SEPARATOR = '\n';

/**
 * One key standing for every key of `keys` (by id): the key itself when there is one, else
 * HKDF-SHA256 of them all in id order. What is sealed with it opens only while every one of
 * them exists: destroying any one makes it unreadable.
 */
function keyOfAll(keys: ReadonlyMap<string, Buffer>): { keyId: string; key: Buffer } {
  const ids = [...keys.keys()].sort();
  if (ids.length === 1) return { keyId: ids[0], key: keys.get(ids[0])! };
  const key = Buffer.from(hkdfSync('sha256', Buffer.concat(ids.map((id) => keys.get(id)!)), Buffer.alloc(0), 'parley:sealed-under-all', 32));
  return { keyId: ids.join(KEY_ID_SEPARATOR), key };
}

/** `plaintext` sealed under every key of `keys` together (at least one): see keyOfAll. */
export function sealUnderAll(keys: ReadonlyMap<string, Buffer>, plaintext: string): SealedFields {
  const { keyId, key } = keyOfAll(keys);
  return sealFields(keyId, key, plaintext);
}

/** Whether a sealed text's key id (`SealedFields.k`) stands for several keys (sealUnderAll). */
export const isUnderSeveralKeys = (keyId: string): boolean => keyId.includes(KEY_ID_SEPARATOR);

/** The ids of the keys `sealed` was sealed under (one, or several with sealUnderAll). */
export const keyIdsOf = (sealed: SealedFields): string[] => sealed.k.split(KEY_ID_SEPARATOR);

/** What `sealUnderAll` sealed, given its keys (`keyIdsOf`); null when they do not open it. */
export function openUnderAll(sealed: SealedFields, keys: ReadonlyMap<string, Buffer>): string | null {
  const { keyId, key } = keyOfAll(keys);
  return keyId === sealed.k ? openFields(sealed, key) : null;
}

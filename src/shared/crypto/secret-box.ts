import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { makePrivateDir, openPrivateFileSync } from '../files/private-files';

/** A key secret as it is stored in the log: AES-256-GCM under the master key, never plain. */
export interface SealedSecret {
  readonly alg: 'aes-256-gcm';
  readonly iv: string;
  readonly tag: string;
  readonly ciphertext: string;
}

/**
 * Encrypts key secrets with the server's master key. The master key lives outside the log
 * (MASTER_KEY, or `<DATA_DIR>/master.key`), so a copy of the log alone reveals no secret.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** `source` names where the key came from, for the error (MASTER_KEY, or the key file). */
  static fromBase64(value: string, source = 'MASTER_KEY'): SecretBox {
    const key = Buffer.from(value, 'base64');
    if (key.length !== 32) throw new Error(`${source} must be 32 bytes, base64-encoded (openssl rand -base64 32)`);
    return new SecretBox(key);
  }

  /** Reads a master key file (see `openMasterKey` for when one may be created). */
  static fromFile(file: string): SecretBox {
    chmodSync(file, 0o600);
    return SecretBox.fromBase64(readFileSync(file, 'utf8').trim(), file);
  }

  /** Creates a master key file (mode 0600); a process that started alongside and created it first wins. */
  static createFile(file: string): SecretBox {
    makePrivateDir(dirname(file));
    // Written whole and flushed to the disk (file, then its directory entry) before any secret
    // is sealed with it: a crash or a volume gone read-only must not leave the log's secrets
    // under a lost or empty key. The link fails if another process created the file first.
    const written = `${file}.${process.pid}.tmp`;
    const fd = openPrivateFileSync(written, 'w');
    try {
      writeSync(fd, randomBytes(32).toString('base64') + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(written, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(written);
    }
    const dir = openSync(dirname(file), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    return SecretBox.fromFile(file);
  }

  seal(plaintext: string): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return {
      alg: 'aes-256-gcm',
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      ciphertext: ciphertext.toString('base64'),
    };
  }

  /** A 32-byte key for one purpose (e.g. signing links), derived from the master key with HKDF-SHA256. */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `parley:${purpose}`, 32));
  }

  /** Whether this key is the one `sealed` was sealed with (GCM's tag says so). */
  opens(sealed: SealedSecret): boolean {
    try {
      this.open(sealed);
      return true;
    } catch {
      return false;
    }
  }

  open(sealed: SealedSecret): string {
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
  }
}

export const SECRET_BOX = Symbol('SecretBox');

import { createECDH } from 'node:crypto';
import type { ParleyConfig } from '../../../config/config';
import type { SecretBox } from '../../../shared/crypto/secret-box';

/** The VAPID key pair (base64url, as web-push and the browser's `applicationServerKey` take them) and the contact subject. */
export interface VapidKeys {
  readonly publicKey: string;
  readonly privateKey: string;
  readonly subject: string;
}

/**
 * BEAMS_VAPID_PUBLIC_KEY / BEAMS_VAPID_PRIVATE_KEY when set; otherwise a P-256 key derived
 * from the master key (HKDF, purpose `beams-vapid`). Derived, not generated, so every process
 * sharing the master key signs with the same key and browsers' subscriptions (bound to the
 * public key) survive restarts, with nothing more to store.
 */
export function vapidKeys(config: Pick<ParleyConfig, 'beamsVapidKeys' | 'beamsVapidSubject'>, box: SecretBox): VapidKeys {
  const subject = config.beamsVapidSubject;
  if (config.beamsVapidKeys) return { ...config.beamsVapidKeys, subject };
  const ecdh = createECDH('prime256v1');
  // 32 bytes from HKDF fall outside the P-256 scalar range with probability ~2^-32 (setPrivateKey would throw).
  const derived = box.deriveKey('beams-vapid');
  ecdh.setPrivateKey(derived);
  return { publicKey: ecdh.getPublicKey().toString('base64url'), privateKey: derived.toString('base64url'), subject };
}

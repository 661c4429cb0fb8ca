import type { SealedSecret } from '../../src/shared/crypto/secret-box';
import { SecretBox } from '../../src/shared/crypto/secret-box';

const isMasterSealed = (value: unknown): value is SealedSecret =>
  typeof value === 'object' &&
  value !== null &&
  (value as SealedSecret).alg === 'aes-256-gcm' &&
  typeof (value as SealedSecret).ciphertext === 'string' &&
  typeof (value as SealedSecret).iv === 'string';

function* jsonValues(text: string): Generator<unknown> {
  try {
    yield JSON.parse(text);
    return;
  } catch {
    /* JSON lines, or not JSON */
  }
  for (const line of text.split('\n')) {
    try {
      yield JSON.parse(line);
    } catch {
      /* not JSON */
    }
  }
}

/**
 * What an operator holding the master key reads in texts (API answers, an export's files):
 * every value sealed under the master key alone (a device's push address, a key secret),
 * opened, by the text's name. A byte scan of these finds what the master key still opens.
 */
export function openMasterSealed(texts: Readonly<Record<string, string>>, box: SecretBox): Record<string, string> {
  const opened: Record<string, string> = {};
  for (const [name, text] of Object.entries(texts)) {
    const found: string[] = [];
    const walk = (value: unknown): void => {
      if (isMasterSealed(value)) {
        try {
          found.push(box.open(value));
        } catch {
          /* sealed under another key */
        }
      } else if (Array.isArray(value)) value.forEach(walk);
      else if (typeof value === 'object' && value !== null) Object.values(value).forEach(walk);
    };
    for (const value of jsonValues(text)) walk(value);
    if (found.length) opened[`opened under the master key: ${name}`] = found.join('\n');
  }
  return opened;
}

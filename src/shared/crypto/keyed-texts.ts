import { DataKeySelector } from '../ports/data-key-store.port';
import { isUnderSeveralKeys } from './sealed-fields';

/** How many texts a `KeyedTexts` keeps, and how many characters in all (ciphertexts and plaintexts). */
export interface KeyedTextsBounds {
  readonly texts: number;
  readonly chars: number;
}

/**
 * Plaintexts by the data key they were sealed under (one text per key: a message version's),
 * each for the ciphertext it was sealed into, kept in the order they arrived (a Map's) and
 * bounded by count and by size, whatever the texts' length: past either bound the oldest go
 * first (their reader opens them with their keys). A destroy drops those of the keys it takes (`forget`).
 */
export class KeyedTexts {
  private readonly texts = new Map<string, { readonly ciphertext: string; readonly plaintext: string }>();
  private chars = 0;

  constructor(private readonly bounds: KeyedTextsBounds) {}

  add(id: string, ciphertext: string, plaintext: string): void {
    // A destroy names single keys: a text under several (sealUnderAll) is opened with its keys.
    if (isUnderSeveralKeys(id)) return;
    this.delete(id);
    this.texts.set(id, { ciphertext, plaintext });
    this.chars += ciphertext.length + plaintext.length;
    while (this.texts.size > this.bounds.texts || this.chars > this.bounds.chars) this.delete(this.texts.keys().next().value!);
  }

  /** The plaintext of `ciphertext` under key `id`; undefined when none is kept. */
  get(id: string, ciphertext: string): string | undefined {
    const text = this.texts.get(id);
    return text?.ciphertext === ciphertext ? text.plaintext : undefined;
  }

  /** `get`, once: the text is dropped as it is answered. */
  take(id: string, ciphertext: string): string | undefined {
    const plaintext = this.get(id, ciphertext);
    if (plaintext !== undefined) this.delete(id);
    return plaintext;
  }

  /** The texts a destroy takes: by id or prefix; every one for an owner's (a text names none). */
  forget(selector: DataKeySelector): void {
    if (this.texts.size === 0) return;
    if ('ids' in selector) {
      for (const id of selector.ids) this.delete(id);
      return;
    }
    if ('owner' in selector) {
      this.texts.clear();
      this.chars = 0;
      return;
    }
    const prefixes = 'prefix' in selector ? [selector.prefix] : selector.prefixes;
    for (const id of [...this.texts.keys()]) if (prefixes.some((prefix) => id.startsWith(prefix))) this.delete(id);
  }

  private delete(id: string): void {
    const text = this.texts.get(id);
    if (!text) return;
    this.texts.delete(id);
    this.chars -= text.ciphertext.length + text.plaintext.length;
  }
}

import { DataKeySelector } from '../ports/data-key-store.port';
import { isUnderSeveralKeys } from './sealed-fields';

/**
 * How many texts handed over are kept unread, and how many characters (ciphertexts and
 * plaintexts): the sends in flight and a second or so of a busy room's behind them, whatever
 * their size. Past either, the oldest go first: their reader opens them with their keys.
 */
const KEPT = 4_096;
const KEPT_CHARS = 4 * 1024 * 1024;

/**
 * Texts another thread of the process sealed and handed over, by key id, each answered once
 * (`take`) for the ciphertext it was sealed into, until a destroy of its key drops it (`forget`).
 * Kept in the order they arrived (a Map's), bounded by count and size.
 */
export class HandedTexts {
  private readonly texts = new Map<string, { readonly ciphertext: string; readonly plaintext: string }>();
  private chars = 0;

  add(id: string, ciphertext: string, plaintext: string): void {
    // A destroy names single keys: a text under several (sealUnderAll) is opened with its keys.
    if (isUnderSeveralKeys(id)) return;
    this.delete(id);
    this.texts.set(id, { ciphertext, plaintext });
    this.chars += ciphertext.length + plaintext.length;
    while (this.texts.size > KEPT || this.chars > KEPT_CHARS) this.delete(this.texts.keys().next().value!);
  }

  /** The plaintext of `ciphertext` under key `id`, once; undefined when none was handed over (or it was taken). */
  take(id: string, ciphertext: string): string | undefined {
    const text = this.texts.get(id);
    if (text?.ciphertext !== ciphertext) return undefined;
    this.delete(id);
    return text.plaintext;
  }

  /** The texts a destroy takes: by id or prefix; every one for an owner's (a handed text names none). */
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

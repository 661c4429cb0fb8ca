import type { DataKeyRing } from '../../shared/crypto/data-key-ring';
import type { ToProjectorThread } from './protocol';

type SealedTextsMessage = Extract<ToProjectorThread, { kind: 'sealed-texts' }>;

/**
 * The request thread's side of handing the projector thread the plaintexts it seals (its key
 * ring's `sealed`, as a send seals its message), gathered over a turn of the event loop and
 * posted in one message: they reach the thread before the commit that holds them is on disk, so
 * the thread opens those events without fetching, deriving or deciphering with their keys
 * (DataKeyRing.rememberHanded). Only the texts cross, not the events: the thread reads these
 * from the log as before (measured: a structured clone of every event cost the request thread
 * about four times as much, and the read it would save the thread is small).
 *
 * `flush` posts what is gathered at once: a destroy of keys does so before it tells the thread,
 * so that no plaintext of a destroyed key arrives after the word of its destroy.
 */
export class SealedTexts {
  /** Key id, ciphertext, plaintext, for each text: flat, one array to clone. */
  private texts: string[] = [];
  private flushing: NodeJS.Immediate | null = null;

  constructor(private readonly post: (message: SealedTextsMessage) => void) {}

  /** A watcher of the key ring's `sealed`. */
  readonly add = (id: string, ciphertext: string, plaintext: string): void => {
    this.texts.push(id, ciphertext, plaintext);
    this.flushing ??= setImmediate(() => this.flush());
  };

  flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = null;
    if (this.texts.length === 0) return;
    const texts = this.texts;
    this.texts = [];
    this.post({ kind: 'sealed-texts', texts });
  }
}

/** The projector thread's side: the texts of a `sealed-texts` message, for its ring to answer once. */
export function rememberSealedTexts(ring: DataKeyRing, { texts }: SealedTextsMessage): void {
  for (let i = 0; i < texts.length; i += 3) ring.rememberHanded(texts[i], texts[i + 1], texts[i + 2]);
}

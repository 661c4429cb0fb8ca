import { physicalCollection } from '../../../projections/projection';
import { IDEMPOTENCY_KEYS, IDEMPOTENT_ANSWERS, idempotencyKeysProjection } from '../../../projections/idempotency/idempotency-keys.projection';
import { SealedSecret, SecretBox } from '../../shared/crypto/secret-box';
import { Document, DocumentChange, ReadModelStore } from '../../shared/ports/read-model-store.port';

/** What a request with a key was answered: what a retry of it is answered again. */
export interface IdempotentAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * A stored answer. Answers may hold personal data (a created user's name), so the body is sealed
 * with the master key, and the document goes when the key expires (the sweep in
 * idempotent-requests.ts): answers never enter the log, which holds only the key record.
 */
interface AnswerDocument extends Document {
  readonly instance_id: string;
  readonly expires_at: string;
  readonly answer: SealedSecret;
}

/** Removed per pass of the sweep: one write of a bounded size. */
const SWEEP_PAGE = 500;

/**
 * The answers of idempotent requests, in the read-model store beside the keys they answer for
 * (`idempotency_keys`), written by the API process that answered. The store's own position guard
 * is given the key record's position, so an answer is only ever replaced by a later use of its key.
 */
export class IdempotentAnswers {
  private readonly collection = physicalCollection(IDEMPOTENT_ANSWERS, idempotencyKeysProjection.version);
  private readonly keys = physicalCollection(IDEMPOTENCY_KEYS, idempotencyKeysProjection.version);

  constructor(
    private readonly readModels: ReadModelStore,
    private readonly box: SecretBox,
  ) {}

  /** Answers to write, and whom to tell once written: one write per turn of the event loop for all the answers of that turn. */
  private pending: { readonly change: DocumentChange; readonly done: { resolve(): void; reject(error: unknown): void } }[] = [];

  /** Resolves once the answer is stored (written with the other answers of the same event-loop turn). */
  store(keyId: string, instanceId: string, expiresAt: string, answer: IdempotentAnswer): Promise<void> {
    const document: AnswerDocument = { _id: keyId, instance_id: instanceId, expires_at: expiresAt, answer: this.box.seal(JSON.stringify(answer)) };
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.flush());
      // The position orders answers of one key: a later use (after it expired) expires later.
      this.pending.push({ change: { collection: this.collection, kind: 'put', document, position: expiresAt }, done: { resolve, reject } });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      await this.readModels.applyBatch(batch.map((p) => p.change), {});
      for (const p of batch) p.done.resolve();
    } catch (error) {
      for (const p of batch) p.done.reject(error);
    }
  }

  /** The answer stored for a key that expires at `expiresAt` (an answer of an earlier use of the key is not it). */
  async find(keyId: string, expiresAt: string): Promise<IdempotentAnswer | null> {
    const document = await this.readModels.get<AnswerDocument>(this.collection, keyId);
    if (!document || document.expires_at !== expiresAt) return null;
    return JSON.parse(this.box.open(document.answer)) as IdempotentAnswer;
  }

  /**
   * Removes expired answers and key records, a page of each at a time; whether a full page went
   * (there may be more). A key record is the projection's, but nothing folds an expired one again
   * (a rebuild would, and the sweep removes it again): the log keeps the record for the audit.
   */
  async removeExpired(now: string): Promise<boolean> {
    let more = false;
    for (const collection of [this.collection, this.keys]) {
      const expired = await this.readModels.find(collection, { where: { expires_at: { lt: now } }, limit: SWEEP_PAGE });
      if (expired.length === 0) continue;
      await this.readModels.applyBatch(expired.map((d) => ({ collection, kind: 'delete' as const, id: d._id })), {});
      more ||= expired.length === SWEEP_PAGE;
    }
    return more;
  }
}

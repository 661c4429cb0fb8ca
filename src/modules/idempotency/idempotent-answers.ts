import { physicalCollection } from '../../../projections/projection';
import { IDEMPOTENCY_KEYS, IDEMPOTENT_ANSWERS, idempotencyKeysProjection } from '../../../projections/idempotency/idempotency-keys.projection';
import { SealedSecret, SecretBox } from '../../shared/crypto/secret-box';
import { SealedFields } from '../../shared/crypto/sealed-fields';
import { Document, DocumentChange, ReadModelStore } from '../../shared/ports/read-model-store.port';

/** What a request with a key was answered: what a retry of it is answered again. */
export interface IdempotentAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Seals an answer under the data keys its change's content was sealed with (the SealingEventStore). */
export interface AnswerSealer {
  /** Null when one of the keys is gone already. */
  sealUnderKeys(ids: readonly string[], plaintext: string): Promise<SealedFields | null>;
  /** Null once one of its keys is destroyed. */
  openUnderKeys(sealed: SealedFields): Promise<string | null>;
}

/** The answer was stored, but what it showed has been deleted since (or before it could be stored). */
export const ANSWER_DELETED = 'deleted' as const;

/**
 * A stored answer. Answers may hold personal data (a created user's name, a room's), so an
 * answer of a change that sealed content in the log is sealed under the same data keys
 * (`sealed`): the delete, erasure or wipe that destroys them makes it unreadable at once, as it
 * does the events. An answer of a change that sealed nothing shows no personal content (an id,
 * a role) and is sealed with the master key (`answer`). Either way the document goes when the
 * key expires (the sweep in idempotent-requests.ts): answers never enter the log, which holds
 * only the key record.
 */
interface AnswerDocument extends Document {
  readonly instance_id: string;
  readonly expires_at: string;
  readonly answer?: SealedSecret;
  readonly sealed?: SealedFields;
  /** What it showed was deleted before it could be stored. */
  readonly deleted?: true;
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
    /** Null where the log seals nothing: answers are then master-sealed. */
    private readonly sealer: AnswerSealer | null,
  ) {}

  /** Answers to write, and whom to tell once written: one write per turn of the event loop for all the answers of that turn. */
  private pending: { readonly change: DocumentChange; readonly done: { resolve(): void; reject(error: unknown): void } }[] = [];

  /**
   * Resolves once the answer is stored (written with the other answers of the same event-loop
   * turn), sealed under the data keys `dataKeyIds` (the keys its change's events were sealed
   * with), or under the master key when there are none.
   */
  async store(keyId: string, instanceId: string, expiresAt: string, answer: IdempotentAnswer, dataKeyIds: readonly string[]): Promise<void> {
    const plaintext = JSON.stringify(answer);
    let sealing: Pick<AnswerDocument, 'answer' | 'sealed' | 'deleted'>;
    if (dataKeyIds.length && this.sealer) {
      const sealed = await this.sealer.sealUnderKeys(dataKeyIds, plaintext);
      sealing = sealed ? { sealed } : { deleted: true };
    } else sealing = { answer: this.box.seal(plaintext) };
    const document: AnswerDocument = { _id: keyId, instance_id: instanceId, expires_at: expiresAt, ...sealing };
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

  /**
   * The answer stored for a key that expires at `expiresAt` (an answer of an earlier use of the
   * key is not it); ANSWER_DELETED when what it showed has been deleted; null when none is stored.
   */
  async find(keyId: string, expiresAt: string): Promise<IdempotentAnswer | typeof ANSWER_DELETED | null> {
    const document = await this.readModels.get<AnswerDocument>(this.collection, keyId);
    if (!document || document.expires_at !== expiresAt) return null;
    if (document.answer) return JSON.parse(this.box.open(document.answer)) as IdempotentAnswer;
    const opened = document.sealed && this.sealer ? await this.sealer.openUnderKeys(document.sealed) : null;
    return opened === null ? ANSWER_DELETED : (JSON.parse(opened) as IdempotentAnswer);
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

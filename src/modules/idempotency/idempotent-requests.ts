import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { checkpointName } from '../../../projections/projection';
import type { ParleyEvent } from '../../../projections/events';
import type { LogPosition, RecordedEvent } from '../../shared/domain/event';
import { derivedAnswerOf, IDEMPOTENCY_KEYS, IdempotencyKeyDocument, idempotencyKeysProjection } from '../../../projections/idempotency/idempotency-keys.projection';
import { CONFIG, ParleyConfig } from '../../config/config';
import { PeriodicSweep } from '../../shared/application/operations/periodic-sweep';
import { CLOCK, LEASE_OWNER, SERVES_REQUESTS, SOLE_API_PROCESS } from '../../shared/application/tokens';
import { GuardedRequest, guardRequest, IdempotencyRecord, releaseRequest } from '../../shared/application/write-path/idempotency-guards';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { SECRET_BOX, SecretBox } from '../../shared/crypto/secret-box';
import { Clock } from '../../shared/domain/clock';
import { DomainError, messageOf } from '../../shared/domain/errors';
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { answerDeleted, answerLost, KeyScope, keyInFlight, keyReused, requestFingerprint, scopedKeyId } from './idempotency-key';
import { ANSWER_DELETED, IdempotentAnswer, IdempotentAnswers } from './idempotent-answers';
import { SealingEventStore } from '../../shared/application/operations/sealing-event-store';

/** A write request that sent an `Idempotency-Key`, as the HTTP layer hands it over. */
export interface KeyedRequest {
  readonly scope: KeyScope;
  readonly key: string;
  readonly method: string;
  /** The path with its query string. */
  readonly url: string;
  readonly body: unknown;
  /** The request's id: what its commands' actors name (`actingInRequest`), so their appends carry the key record. */
  readonly requestId: string;
}

/** Run the request, then `finish` with its answer (or `abandon` when it failed; after `finish`, nothing); or answer it again as the first time. */
export type KeyedOutcome =
  | { readonly kind: 'run'; finish(answer: IdempotentAnswer): Promise<void>; abandon(): void }
  | { readonly kind: 'replay'; readonly answer: IdempotentAnswer };

const keysBehind = (cause: unknown) =>
  Object.assign(
    new DomainError(
      'unavailable',
      'idempotency_keys_behind',
      'The server could not check this Idempotency-Key against earlier requests yet (its record of keys is behind the log); nothing was done, retry shortly',
    ),
    { cause },
  );

/**
 * Whether the change itself tells the whole answer (a send's `{message_id}`: derivedAnswerOf, which
 * the keys projection folds from the same append as the key record): then nothing is stored, and a
 * retry is answered from the key record.
 */
const toldByTheChange = (done: GuardedRequest, answer: IdempotentAnswer): boolean => {
  for (const { events } of done.appended) {
    for (const event of events) {
      const derived = derivedAnswerOf(event as RecordedEvent<ParleyEvent>);
      if (derived) return derived.status === answer.status && JSON.stringify(derived.body) === JSON.stringify(answer.body);
    }
  }
  return false;
};

/** What a claim on a key in flight outlives the longest a write waits for its read models by (the append and the rest). */
const CLAIM_MARGIN_MS = 30_000;

/** How often expired keys and answers are removed. */
const SWEEP_INTERVAL_MS = 60_000;

/** How many key records of its own a sole process remembers until it sees them folded (past it, the oldest are waited for as a group). */
const OWN_RECORDS_REMEMBERED = 10_000;

const later = (a: LogPosition | null, b: LogPosition | null | undefined): LogPosition | null => (b == null ? a : a === null || b > a ? b : a);

/**
 * Idempotent writes. A request with a key:
 * 1. is refused (409, Retry-After) while a request with the same key runs in this process;
 * 2. looks its key up in `idempotency_keys` once that projection reached the log's head (the
 *    record may be in the log and not yet folded);
 * 3. found: the same request is answered as the first time (its stored answer, or the answer the
 *    change itself tells); another request with the key is refused (422);
 * 4. not found: runs, and every event it appends carries the key record (in the same append as
 *    the change, see idempotency-guards.ts); once answered 2xx, its answer is stored (sealed).
 * A request that changed nothing (a 4xx, a no-op) leaves no record: a retry runs again and is
 * answered as it would have been. Several API processes share the in-flight refusal through a
 * lease per key in the read-model store (see `claim`).
 */
@Injectable()
export class IdempotentRequests implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('idempotency');
  private readonly inFlight = new Set<string>();
  /**
   * Where the log is written by this process alone in the normal course (the embedded server), the
   * key records this process appended that the keys projection may not have folded yet, by key,
   * at the position of the append that carries each; in append order.
   */
  private readonly ownRecords = new Map<string, LogPosition>();
  /** Records of its own this process stopped remembering (OWN_RECORDS_REMEMBERED): a look-up waits for the projection to pass them. */
  private forgottenThrough: LogPosition | null = null;
  /**
   * The log's head when another writer (a CLI, another connection) was last seen to append, until
   * the keys projection is known to have folded it; at start, the head the process found.
   */
  private othersHead: Promise<LogPosition | null> | null = null;
  /** The next look-up waits for the log's head: at start, and after a request whose append may have landed unseen. */
  private headNext = true;
  private readonly answers: IdempotentAnswers;
  /** What knows which data keys a change's events are sealed with, and seals answers under them (null: the log seals nothing). */
  private readonly sealing: SealingEventStore | null;
  private readonly ttlMs: number;
  private readonly claimTtlMs: number;
  private readonly sweeper = new PeriodicSweep(() => this.removeExpired(), SWEEP_INTERVAL_MS, (error) =>
    this.logger.warn(`removing expired idempotency keys failed; retrying in ${SWEEP_INTERVAL_MS} ms: ${messageOf(error)}`),
  );

  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    @Inject(SECRET_BOX) box: SecretBox,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(CONFIG) config: ParleyConfig,
    @Inject(SERVES_REQUESTS) private readonly servesRequests: boolean,
    @Inject(SOLE_API_PROCESS) private readonly soleProcess: boolean,
    @Inject(LEASE_OWNER) private readonly leaseOwner: string,
  ) {
    this.sealing = events instanceof SealingEventStore ? events : null;
    this.answers = new IdempotentAnswers(readModels, box, this.sealing);
    this.ttlMs = config.idempotencyKeyTtlMs;
    // As long as a request may run: past it a dead process's claim lapses.
    this.claimTtlMs = config.readYourWritesTimeoutMs + CLAIM_MARGIN_MS;
  }

  onApplicationBootstrap(): void {
    if (this.servesRequests) this.sweeper.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.sweeper.stop();
  }

  async begin(request: KeyedRequest): Promise<KeyedOutcome> {
    const keyId = scopedKeyId(request.scope, request.key);
    if (this.inFlight.has(keyId)) throw keyInFlight();
    this.inFlight.add(keyId);
    const claim = await this.claim(keyId, request.requestId).catch((error: unknown) => {
      this.inFlight.delete(keyId);
      throw error;
    });
    const release = () => {
      this.inFlight.delete(keyId);
      claim?.release();
    };
    try {
      const fingerprint = requestFingerprint(request.method, request.url, request.body);
      const found = await this.lookUp(keyId);
      if (found) {
        if (found.request !== fingerprint) throw keyReused();
        const stored = await this.answers.find(keyId, found.expires_at);
        // What the change itself tells (a send's id) shows nothing personal: it outlives a delete.
        const answer = stored === ANSWER_DELETED ? found.derived_answer : (stored ?? found.derived_answer);
        if (!answer) throw stored === ANSWER_DELETED ? answerDeleted() : answerLost();
        release();
        return { kind: 'replay', answer };
      }
      const record: IdempotencyRecord = { key: keyId, request: fingerprint, expires_at: new Date(this.clock.now().getTime() + this.ttlMs).toISOString() };
      // Another request in flight with the same id (a client's X-Request-Id sent twice) would share the guard.
      if (!guardRequest(request.requestId, record)) throw keyInFlight();
      let settled = false;
      return {
        kind: 'run',
        finish: async (answer) => {
          if (settled) return;
          settled = true;
          try {
            const done = releaseRequest(request.requestId);
            this.remember(keyId, done);
            // Without an append there is no key record in the log to answer a retry from: it runs again.
            if (done?.appended.length && answer.status >= 200 && answer.status < 300 && !toldByTheChange(done, answer)) {
              // An answer without a body (204) shows nothing of what the change sealed: it outlives a delete.
              const dataKeys = answer.body === null || answer.body === undefined ? [] : this.dataKeysOf(done);
              await this.answers.store(keyId, request.scope.instanceId, record.expires_at, answer, dataKeys);
            }
          } catch (error) {
            // The change is made and answered; a retry gets the answer the change tells, or 409 answer_lost.
            this.logger.warn(`the answer of an idempotent request could not be stored: ${messageOf(error)}`);
          } finally {
            release();
          }
        },
        abandon: () => {
          if (settled) return;
          settled = true;
          this.remember(keyId, releaseRequest(request.requestId));
          release();
        },
      };
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * Where several API processes serve the same data, a key in flight is claimed in the shared
   * store (a lease named after it), so a duplicate sent to another process meanwhile is refused
   * 409 too; the embedded server is the only process, and its memory is enough. Null: no claim.
   */
  private async claim(keyId: string, requestId: string): Promise<{ release(): void } | null> {
    if (this.soleProcess) return null;
    const name = `idempotency-key:${keyId}`;
    const owner = `${this.leaseOwner}:${requestId}`;
    if (!(await this.readModels.acquireLease(name, owner, this.claimTtlMs))) throw keyInFlight();
    return {
      release: () =>
        void this.readModels.releaseLease(name, owner).catch((error: unknown) => {
          // Lapses by itself: a retry meanwhile is answered 409 until then.
          this.logger.warn(`releasing the claim on an idempotency key failed: ${messageOf(error)}`);
        }),
    };
  }

  /**
   * The live record of a key, read once the keys projection has folded every record of it the log
   * may hold: a record appended (by any process) before this request arrived is then folded. Read
   * only after the wait: a retry is the rare case, and a first read would miss for every new key.
   */
  private async lookUp(keyId: string): Promise<IdempotencyKeyDocument | null> {
    const keys = [checkpointName(idempotencyKeysProjection)];
    const others = this.othersHeadToWaitFor();
    const before = others ? await others : await this.events.headPosition();
    const through = others ? later(later(before, this.ownRecords.get(keyId)), this.forgottenThrough) : before;
    if (through !== null) {
      try {
        await this.readYourWrites.waitFor(through, keys);
      } catch (error) {
        // Its own words would say a change was saved: none was, yet.
        throw keysBehind(error);
      }
      this.folded(through, others);
    }
    const found = await this.readModels.get<IdempotencyKeyDocument>(IDEMPOTENCY_KEYS, keyId);
    return found && found.expires_at > this.clock.now().toISOString() ? found : null;
  }

  /**
   * Where this process is the log's only writer in the normal course and the store can tell when
   * another one appended (the embedded server on SQLite), the head the keys projection must reach
   * for what others appended (null once it has): a look-up then waits for that and for this
   * process's own record of the key, not for the whole log's head. Undefined: wait for the head.
   */
  private othersHeadToWaitFor(): Promise<LogPosition | null> | undefined {
    if (!this.soleProcess || !this.events.appendedElsewhere) return undefined;
    if (this.events.appendedElsewhere() || this.headNext) {
      this.headNext = false;
      this.othersHead = this.events.headPosition();
    }
    return this.othersHead ?? Promise.resolve(null);
  }

  /** The keys projection folded the log through `through`: what was waited for is done. */
  private folded(through: LogPosition, others: Promise<LogPosition | null> | undefined): void {
    if (others && this.othersHead === others) this.othersHead = null;
    if (this.forgottenThrough !== null && this.forgottenThrough <= through) this.forgottenThrough = null;
    // Remembered in append order: what the projection passed is forgotten from the front.
    for (const [key, position] of this.ownRecords) {
      if (position > through) break;
      this.ownRecords.delete(key);
    }
  }

  /**
   * Remembers this process's record of a key, appended by a request that ended (answered or not),
   * until the keys projection is seen past it. A request that stamped a command but knows of no
   * durable append (refused, or failed with its outcome unknown) may still have put the record in
   * the log: the next look-up then waits for the head.
   */
  private remember(keyId: string, done: GuardedRequest | null): void {
    if (!this.soleProcess || !done) return;
    if (done.appended.length === 0) {
      this.headNext = true;
      return;
    }
    const position = done.appended.reduce<LogPosition | null>((last, append) => later(last, append.position), null)!;
    this.ownRecords.delete(keyId);
    this.ownRecords.set(keyId, position);
    if (this.ownRecords.size > OWN_RECORDS_REMEMBERED) {
      const [oldest, at] = this.ownRecords.entries().next().value as [string, LogPosition];
      this.ownRecords.delete(oldest);
      this.forgottenThrough = later(this.forgottenThrough, at);
    }
  }

  /**
   * The data keys a request's appends sealed content under, and those of content its answer shows
   * besides (`answerShows`): its answer may show that content, so it is sealed under them too.
   */
  private dataKeysOf(done: GuardedRequest): string[] {
    if (!this.sealing) return [];
    const ids = new Set<string>(done.shows);
    for (const { stream, events } of done.appended) for (const key of this.sealing.dataKeysOf(stream, events)) ids.add(key.id);
    return [...ids];
  }

  private async removeExpired(): Promise<void> {
    while (!this.sweeper.stopped && (await this.answers.removeExpired(this.clock.now().toISOString())));
  }
}

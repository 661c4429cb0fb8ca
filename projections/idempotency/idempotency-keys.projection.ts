import type { RecordedEvent } from '../../src/shared/domain/event';
import type { IdempotencyRecord } from '../../src/shared/domain/idempotency-record';
import { parseStreamName } from '../../src/shared/domain/streams';
import { EVERY_EVENT_TYPE, type ParleyEvent } from '../events';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const IDEMPOTENCY_KEYS = 'idempotency_keys';
/**
 * The answers of idempotent requests, written by the API process that answered (sealed under the
 * data keys of what they show; see src/modules/idempotency/idempotent-answers.ts), never by the projector: declared
 * here so that it is made, versioned and dropped with the keys it answers for.
 */
export const IDEMPOTENT_ANSWERS = 'idempotent_answers';

/** An answer that can be told from the change itself, for when the stored one is missing (the server died before storing it). */
export interface DerivedAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A key that guarded a change: which request it was, where the change is, and until when a retry is answered from it. */
export interface IdempotencyKeyDocument extends Document {
  readonly instance_id: string;
  readonly request: string;
  readonly expires_at: string;
  /** The first event the request appended. */
  readonly position: string;
  readonly stream: string;
  readonly type: string;
  readonly derived_answer?: DerivedAnswer;
}

export const idempotencyRecordOf = (event: RecordedEvent): IdempotencyRecord | undefined => {
  const record = event.metadata?.idempotency as IdempotencyRecord | undefined;
  return record && typeof record.key === 'string' && typeof record.request === 'string' && typeof record.expires_at === 'string' ? record : undefined;
};

/**
 * What the route that wrote the event answered, where the event holds all of it and nothing
 * personal: a send's `{message_id}`, a Beams publish's `{publishId}`, a Feeds publish's item ids.
 */
export const derivedAnswerOf = (event: RecordedEvent<ParleyEvent>): DerivedAnswer | undefined => {
  switch (event.type) {
    case 'MessageSent':
      return { status: 201, body: { message_id: event.data.id } };
    case 'BeamsPublishAccepted':
      return { status: 200, body: { publishId: event.data.publish_id } };
    case 'FeedItemsPublished':
      return { status: 200, body: { item_ids: event.data.items.map((item) => item.id) } };
    default:
      return undefined;
  }
};

/**
 * The idempotency keys of the log: every event a request with an `Idempotency-Key` appended
 * carries the key record in its metadata (in the same append as the change), and this folds the
 * first of them per key. A key used again after it expired starts a new document.
 */
export const idempotencyKeysProjection: ProjectionDefinition<ParleyEvent, IdempotencyKeyDocument> = {
  name: 'idempotency_keys',
  version: 1,
  collections: [
    { name: IDEMPOTENCY_KEYS, indexes: [{ fields: ['expires_at'] }] },
    { name: IDEMPOTENT_ANSWERS, indexes: [{ fields: ['expires_at'] }] },
  ],
  handles: EVERY_EVENT_TYPE,
  // A request with a key waits for it to reach the log's head before it looks a key up
  // (src/modules/idempotency/idempotent-requests.ts): writes never wait for it.
  awaitedByReaders: true,

  targets(event): Target[] {
    const record = idempotencyRecordOf(event);
    return record ? [{ collection: IDEMPOTENCY_KEYS, id: record.key }] : [];
  },

  evolve(document, event) {
    const record = idempotencyRecordOf(event)!;
    if (document && document.expires_at > event.recordedAt) {
      if (document.derived_answer || document.request !== record.request) return document;
      const derived = derivedAnswerOf(event);
      return derived ? { ...document, derived_answer: derived } : document;
    }
    const derived = derivedAnswerOf(event);
    return {
      _id: record.key,
      instance_id: parseStreamName(event.streamName)?.instanceId ?? '',
      request: record.request,
      expires_at: record.expires_at,
      position: event.position,
      stream: event.streamName,
      type: event.type,
      ...(derived && { derived_answer: derived }),
    } satisfies IdempotencyKeyDocument;
  },
};

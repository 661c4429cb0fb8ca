import type { RecordedEvent } from '../../src/shared/domain/event';
import type { IdempotencyRecord } from '../../src/shared/domain/idempotency-record';
import type { ParleyEvent } from '../events';
import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { IDEMPOTENCY_KEYS, idempotencyKeysProjection } from './idempotency-keys.projection';

const at = '2026-01-01T00:00:00.000Z';
const text = [{ type: 'text/plain', content: 'hi' }];
const record: IdempotencyRecord = { key: 'k-hash', request: 'r-hash', expires_at: '2026-01-02T00:00:00.000Z' };
const guarded = <E extends RecordedEvent<ParleyEvent>>(event: E, with_: IdempotencyRecord = record, recordedAt = at): E => ({
  ...event,
  recordedAt,
  metadata: { ...event.metadata, idempotency: with_ },
});

describe('idempotency keys projection', () => {
  const sent = guarded(recorded('messages-acme.lobby', 'MessageSent', { id: 7, user_id: 'ann', parts: text, room_created_at: at, created_at: at }));

  it("folds the key record an append carries in its metadata, with a send's answer derived from the event and nothing of its content", async () => {
    const docs = await project(idempotencyKeysProjection, [sent, recorded('messages-acme.lobby', 'MessageSent', { id: 8, user_id: 'bob', parts: text, room_created_at: at, created_at: at })]);
    expect([...docs.entries()]).toEqual([
      [
        `${IDEMPOTENCY_KEYS}|k-hash`,
        {
          _id: 'k-hash',
          instance_id: 'acme',
          request: 'r-hash',
          expires_at: record.expires_at,
          position: sent.position,
          stream: 'messages-acme.lobby',
          type: 'MessageSent',
          derived_answer: { status: 201, body: { message_id: 7 } },
        },
      ],
    ]);
    expect(JSON.stringify([...docs.values()])).not.toContain('hi');
  });

  it('keeps the first record of a key while it lives, and starts afresh when the key is used again after it expired', async () => {
    const second = guarded(recorded('messages-acme.lobby', 'MessageSent', { id: 9, user_id: 'ann', parts: text, room_created_at: at, created_at: at }));
    const kept = await project(idempotencyKeysProjection, [sent, second]);
    expect([...kept.values()][0]).toMatchObject({ position: sent.position, derived_answer: { body: { message_id: 7 } } });

    const later = guarded(
      recorded('messages-acme.lobby', 'MessageSent', { id: 10, user_id: 'ann', parts: text, room_created_at: at, created_at: at }),
      { ...record, request: 'other', expires_at: '2026-01-04T00:00:00.000Z' },
      '2026-01-03T00:00:00.000Z',
    );
    const renewed = await project(idempotencyKeysProjection, [sent, later]);
    expect([...renewed.values()][0]).toMatchObject({ request: 'other', position: later.position, derived_answer: { body: { message_id: 10 } } });
  });

  it('derives what a Beams publish and a Feeds publish answered; other changes have no derived answer', async () => {
    const publish = guarded(
      recorded('beamspublish-acme.p1', 'BeamsPublishAccepted', { publish_id: 'p1', target: { interests: ['x'] } as never, request: {}, webhook_url: null, accepted_at: at }),
      { ...record, key: 'b' },
    );
    const items = guarded(recorded('feed-acme.f', 'FeedItemsPublished', { items: [{ id: 'i1', created: 1, data: {} } as never] }), { ...record, key: 'f' });
    const cursor = guarded(recorded('cursor-acme.ann', 'ReadCursorSet', { room_id: 'lobby', user_id: 'ann', position: 3, updated_at: at } as never), { ...record, key: 'c' });
    const docs = [...(await project(idempotencyKeysProjection, [publish, items, cursor])).values()];
    expect(docs.map((d) => [d._id, d.derived_answer])).toEqual([
      ['b', { status: 200, body: { publishId: 'p1' } }],
      ['f', { status: 200, body: { item_ids: ['i1'] } }],
      ['c', undefined],
    ]);
  });

  it('gives a replayed event the same document (at-least-once delivery)', async () => {
    const once = await project(idempotencyKeysProjection, [sent]);
    const twice = await project(idempotencyKeysProjection, [sent, sent]);
    expect([...twice.entries()]).toEqual([...once.entries()]);
  });
});

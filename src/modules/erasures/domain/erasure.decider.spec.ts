import { fold } from '../../../shared/domain/decider';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { erasureDecider, NO_COUNTS } from './erasure.decider';
import { ErasureEvent } from './erasure.events';

const now = '2026-01-01T00:00:00.000Z';
const born = '2025-06-01T00:00:00.000Z';
const by = { key_id: 'k', su: true };
const given = deciderSpecification(erasureDecider);
const requested: ErasureEvent = { type: 'ErasureRequested', data: { user_id: 'alice', user_created_at: born, requested_by: by, requested_at: now } };
const counts = { ...NO_COUNTS, user: 1, messages: 3 };
const progressed: ErasureEvent = { type: 'ErasureProgressed', data: { step: 'messages', scanned_to: '42', counts, at: now } };
const completed: ErasureEvent = { type: 'ErasureCompleted', data: { counts, completed_at: now } };

describe('erasure decider', () => {
  it('requests an erasure once, naming the incarnation of the user id it erases', () => {
    given().when({ type: 'RequestErasure', userId: 'alice', userCreatedAt: born, requestedBy: by, now }).then([requested]);
    given(requested).when({ type: 'RequestErasure', userId: 'alice', userCreatedAt: born, requestedBy: by, now }).thenNothingHappened();
  });

  it('records progress checkpoints until it completes, and nothing after', () => {
    given(requested).when({ type: 'RecordProgress', step: 'messages', scannedTo: '42', counts, now }).then([progressed]);
    given(requested)
      .when({ type: 'RecordProgress', step: 'messages', scannedTo: '42', counts, erasing: [7, 9], now })
      .then([{ type: 'ErasureProgressed', data: { step: 'messages', scanned_to: '42', counts, erasing: [7, 9], at: now } }]);
    given(requested, progressed).when({ type: 'CompleteErasure', counts, now }).then([completed]);
    given(requested, progressed, completed).when({ type: 'CompleteErasure', counts, now }).thenNothingHappened();
    given(requested, completed).when({ type: 'RecordProgress', step: 'messages', scannedTo: '43', counts, now }).thenNothingHappened();
    given().when({ type: 'RecordProgress', step: 'counted', scannedTo: null, counts, now }).thenNothingHappened();
    given().when({ type: 'CompleteErasure', counts, now }).thenNothingHappened();
  });

  it('folds where it stands: pending, running from its last checkpoint, completed with its counts', () => {
    expect(fold(erasureDecider, [requested])).toMatchObject({ status: 'pending', userId: 'alice', userCreatedAt: born, requestedBy: by, step: null, scannedTo: null });
    expect(fold(erasureDecider, [requested, progressed])).toMatchObject({ status: 'running', step: 'messages', scannedTo: '42', counts });
    expect(fold(erasureDecider, [requested, progressed, completed])).toMatchObject({ status: 'completed', counts, completedAt: now });
  });
});

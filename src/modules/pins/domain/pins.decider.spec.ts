import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { PinEvent } from './pin.events';
import { MAX_PINS_PER_ROOM, PinsCommand, pinsDecider } from './pins.decider';

describe('pinsDecider', () => {
  const given = deciderSpecification(pinsDecider);
  const now = '2026-01-01T00:00:00.000Z';
  const pin = (messageId: number, extra: Partial<Extract<PinsCommand, { type: 'PinMessage' }>> = {}): PinsCommand => ({
    type: 'PinMessage',
    roomId: 'r',
    roomCreatedAt: 'r1',
    messageId,
    userId: 'ann',
    now,
    ...extra,
  });
  const unpin = (messageId: number, roomCreatedAt = 'r1'): PinsCommand => ({ type: 'UnpinMessage', roomId: 'r', roomCreatedAt, messageId, now });
  const pinned = (messageId: number, extra: { until?: string; room_created_at?: string } = {}): PinEvent => ({
    type: 'MessagePinned',
    data: { room_id: 'r', room_created_at: extra.room_created_at ?? 'r1', message_id: messageId, pinned_by: 'ann', pinned_at: now, ...(extra.until && { until: extra.until }) },
  });
  const unpinned = (messageId: number): PinEvent => ({ type: 'MessageUnpinned', data: { room_id: 'r', room_created_at: 'r1', message_id: messageId, unpinned_at: now } });

  it('pins and unpins idempotently; pinning again changes only until', () => {
    given().when(pin(1)).then([pinned(1)]);
    given(pinned(1)).when(pin(1)).then([]);
    given(pinned(1)).when(pin(1, { until: '2027-01-01T00:00:00.000Z' })).then([pinned(1, { until: '2027-01-01T00:00:00.000Z' })]);
    given(pinned(1)).when(unpin(1)).then([unpinned(1)]);
    given().when(unpin(1)).then([]);
  });

  it('under a shadow ban, pins and unpins for the user alone, over what everyone sees', () => {
    const shadowPinned = (messageId: number): PinEvent => ({
      type: 'MessagePinned',
      data: { room_id: 'r', room_created_at: 'r1', message_id: messageId, pinned_by: 'ben', pinned_at: now, shadow: true },
    });
    const shadowUnpinned = (messageId: number): PinEvent => ({
      type: 'MessageUnpinned',
      data: { room_id: 'r', room_created_at: 'r1', message_id: messageId, unpinned_at: now, unpinned_by: 'ben', shadow: true },
    });
    const asBen = { userId: 'ben', shadow: true };
    given().when(pin(1, asBen)).then([shadowPinned(1)]);
    given(shadowPinned(1)).when(pin(1, asBen)).then([]);
    // Everyone else still sees no pin: theirs is decided without the shadowed one.
    given(shadowPinned(1)).when(pin(1)).then([pinned(1)]);
    given(pinned(1)).when({ ...unpin(1), ...asBen }).then([shadowUnpinned(1)]);
    given(pinned(1), shadowUnpinned(1)).when({ ...unpin(1), ...asBen }).then([]);
    given(pinned(1), shadowUnpinned(1)).when(unpin(1)).then([unpinned(1)]);
    // The cap counts what the user sees: others' shadowed pins take nothing from them.
    const shadowFull = Array.from({ length: MAX_PINS_PER_ROOM }, (_, i) => shadowPinned(i + 1));
    given(...shadowFull).when(pin(99)).then([pinned(99)]);
    given(...shadowFull).when(pin(99, asBen)).thenThrows(DomainError, { code: 'unprocessable_entity/too_many_pins' });
  });

  it('refuses an until that is not ahead, and a pin past the cap; expired pins and an earlier room’s do not count', () => {
    given().when(pin(1, { until: now })).thenThrows(DomainError, { code: 'unprocessable_entity/invalid_until' });
    const full = Array.from({ length: MAX_PINS_PER_ROOM }, (_, i) => pinned(i + 1));
    given(...full).when(pin(99)).thenThrows(DomainError, { code: 'unprocessable_entity/too_many_pins' });
    given(...full).when(pin(3, { until: '2027-01-01T00:00:00.000Z' })).then([pinned(3, { until: '2027-01-01T00:00:00.000Z' })]);
    const expired = Array.from({ length: MAX_PINS_PER_ROOM }, (_, i) => pinned(i + 1, { until: '2025-01-01T00:00:00.000Z' }));
    given(...expired).when(pin(99)).then([pinned(99)]);
    const earlierRoom = Array.from({ length: MAX_PINS_PER_ROOM }, (_, i) => pinned(i + 1, { room_created_at: 'r0' }));
    given(...earlierRoom).when(pin(99)).then([pinned(99)]);
    given(pinned(1, { room_created_at: 'r0' })).when(unpin(1)).then([]);
  });
});

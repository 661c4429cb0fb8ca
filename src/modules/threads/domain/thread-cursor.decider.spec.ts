import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { SetThreadCursor, threadCursorDecider } from './thread-cursor.decider';
import { ThreadReadCursorSet } from './thread.events';

describe('threadCursorDecider', () => {
  const given = deciderSpecification(threadCursorDecider);
  const set = (position: number, roomCreatedAt = 'r0'): SetThreadCursor => ({
    type: 'SetThreadCursor',
    roomId: 'lobby',
    roomCreatedAt,
    parentId: 7,
    userId: 'ann',
    position,
    now: 't',
  });
  const wasSet = (position: number, roomCreatedAt = 'r0'): ThreadReadCursorSet => ({
    type: 'ThreadReadCursorSet',
    data: { room_id: 'lobby', room_created_at: roomCreatedAt, parent_id: 7, user_id: 'ann', position, updated_at: 't' },
  });

  it('moves forward only: a position at or below the one set changes nothing', () => {
    given().when(set(10)).then([wasSet(10)]);
    given(wasSet(10)).when(set(12)).then([wasSet(12)]);
    given(wasSet(10)).when(set(10)).then([]);
    given(wasSet(10)).when(set(3)).then([]);
  });

  it('starts again in a room created again with the same id', () => {
    given(wasSet(10)).when(set(3, 'r1')).then([wasSet(3, 'r1')]);
  });

  it('refuses a position that is no reply id', () => {
    given().when(set(-1)).thenThrows(DomainError, { code: 'unprocessable_entity/invalid_position' });
    given().when(set(1.5)).thenThrows(DomainError, { code: 'unprocessable_entity/invalid_position' });
  });
});

import { fold } from '../../../shared/domain/decider';
import { idBlockDecider, messageDecider, MessageCommand, StaleMessageIdError, timelineDecider } from './message.decider';
import { MessageEvent } from './message.events';

const sent = (id: number): MessageEvent => ({
  type: 'MessageSent',
  data: { id, user_id: 'ann', user_created_at: 'u1', parts: [{ type: 'text/plain', content: `m${id}` }], room_created_at: 'r1', created_at: 't' },
});

/** The error code a decision throws, or 'decided'. */
const codeOf = (decision: () => unknown): string => {
  try {
    decision();
  } catch (error) {
    return (error as { code: string }).code;
  }
  return 'decided';
};

/** Deep-freezes a state so that an impure evolve throws. */
const frozen = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) frozen(v);
    Object.freeze(value);
  }
  return value;
};

describe('timelineDecider', () => {
  it('keeps only the last id, however many messages the room has', () => {
    const state = fold(timelineDecider, Array.from({ length: 10_000 }, (_, i) => sent(i + 1)));
    expect(state).toEqual({ lastId: 10_000 });
  });

  it('never changes the state it is given', () => {
    const before = frozen(timelineDecider.initialState());
    const after = timelineDecider.evolve(before, sent(7));
    expect(before).toEqual({ lastId: 0 });
    expect(after).toEqual({ lastId: 7 });
  });

  it('refuses an id at or below the last one (another process sent first)', () => {
    const command = { type: 'SendMessage' as const, id: 5, userId: 'ann', userCreatedAt: 'u1', parts: [], roomCreatedAt: 'r1', now: 't' };
    expect(() => timelineDecider.decide(command, { lastId: 5 })).toThrow(StaleMessageIdError);
    expect(timelineDecider.decide({ ...command, id: 6 }, { lastId: 5 })).toEqual([
      { type: 'MessageSent', data: { id: 6, user_id: 'ann', user_created_at: 'u1', parts: [], room_created_at: 'r1', created_at: 't' } },
    ]);
  });

  it('folds from the newest MessageSent: older timelines also hold edits and deletions', () => {
    expect(timelineDecider.foldsFrom!(sent(1))).toBe(true);
    expect(timelineDecider.foldsFrom!({ type: 'MessageDeleted', data: { id: 1, tombstone: false, deleted_at: 't' } })).toBe(false);
    expect(idBlockDecider.foldsFrom!({ type: 'MessageIdsReserved', data: { first: 1, last: 1000 } })).toBe(true);
  });
});

describe('messageDecider', () => {
  const base = {
    id: 9,
    roomId: 'lobby',
    sent: { userId: 'ann', userCreatedAt: '2026-01-01T00:00:00.000Z', roomCreatedAt: 'r1', createdAt: '2026-01-02T00:00:00.000Z' },
    roomCreatedAt: 'r1',
    actor: { userId: 'ann', userCreatedAt: '2026-01-01T00:00:00.000Z', su: false },
    now: 't2',
  };
  const edit: MessageCommand = { ...base, type: 'EditMessage', parts: [{ type: 'text/plain', content: 'new' }] };
  const remove: MessageCommand = { ...base, type: 'DeleteMessage', tombstone: false };

  it('edits and deletes for the sender, naming the room in the event', () => {
    const state = frozen(messageDecider.initialState());
    expect(messageDecider.decide(edit, state)).toEqual([
      { type: 'MessageEdited', data: { id: 9, room_id: 'lobby', parts: [{ type: 'text/plain', content: 'new' }], updated_at: 't2' } },
    ]);
    expect(messageDecider.decide(remove, state)).toEqual([
      { type: 'MessageDeleted', data: { id: 9, room_id: 'lobby', tombstone: false, deleted_at: 't2' } },
    ]);
  });

  it('lets su change anyone’s message and forbids other users', () => {
    const state = messageDecider.initialState();
    expect(messageDecider.decide({ ...edit, actor: { userCreatedAt: null, su: true } }, state)).toHaveLength(1);
    expect(codeOf(() => messageDecider.decide({ ...edit, actor: { userId: 'bob', userCreatedAt: '2026-01-01T00:00:00.000Z', su: false } }, state))).toBe(
      'forbidden/not_message_sender',
    );
  });

  it('forbids a later user of the sender’s id (deleted, then created again) and a deleted sender', () => {
    const state = messageDecider.initialState();
    const reborn = { userId: 'ann', userCreatedAt: '2026-01-03T00:00:00.000Z', su: false };
    for (const command of [edit, remove]) {
      expect(codeOf(() => messageDecider.decide({ ...command, actor: reborn }, state))).toBe('forbidden/not_message_sender');
      expect(codeOf(() => messageDecider.decide({ ...command, actor: { ...reborn, userCreatedAt: null } }, state))).toBe(
        'forbidden/not_message_sender',
      );
    }
  });

  it('tells the sender of a message logged without its incarnation by when each came to be', () => {
    const state = messageDecider.initialState();
    const legacy = { userId: 'ann', roomCreatedAt: 'r1', createdAt: '2026-01-02T00:00:00.000Z' };
    const sender = { userId: 'ann', userCreatedAt: '2026-01-01T00:00:00.000Z', su: false };
    expect(messageDecider.decide({ ...edit, sent: legacy, actor: sender }, state)).toHaveLength(1);
    const reborn = { ...sender, userCreatedAt: '2026-01-03T00:00:00.000Z' };
    expect(codeOf(() => messageDecider.decide({ ...edit, sent: legacy, actor: reborn }, state))).toBe('forbidden/not_message_sender');
  });

  it('answers not found for a message the timeline lacks, one of an earlier room of the same id, or a deleted one', () => {
    const notFound = (command: MessageCommand, state = messageDecider.initialState()) =>
      codeOf(() => messageDecider.decide(command, state));
    expect(notFound({ ...edit, sent: null })).toBe('not_found/message_not_found');
    expect(notFound({ ...edit, roomCreatedAt: 'r2' })).toBe('not_found/message_not_found');
    const deleted = fold(messageDecider, messageDecider.decide(remove, messageDecider.initialState()));
    expect(deleted).toEqual({ deleted: true });
    expect(notFound(edit, deleted)).toBe('not_found/message_not_found');
    expect(notFound(remove, deleted)).toBe('not_found/message_not_found');
  });
});

import { fold } from '../../../shared/domain/decider';
import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification, frozen } from '../../../../test/support/decider-specification';
import { idBlockDecider, messageDecider, MessageCommand, StaleMessageIdError, timelineDecider } from './message.decider';
import { MessageEvent, ReactionEvent } from './message.events';
import { MAX_REACTION_TYPE_LENGTH, MAX_REACTION_TYPES } from './message-reactions';

const sent = (id: number): MessageEvent => ({
  type: 'MessageSent',
  data: { id, user_id: 'ann', user_created_at: 'u1', parts: [{ type: 'text/plain', content: `m${id}` }], room_created_at: 'r1', created_at: 't' },
});

describe('timelineDecider', () => {
  const given = deciderSpecification(timelineDecider);
  const send = { type: 'SendMessage' as const, id: 5, userId: 'ann', userCreatedAt: 'u1', parts: [], roomCreatedAt: 'r1', now: 't' };
  const sentBySend = (id: number): MessageEvent => ({
    type: 'MessageSent',
    data: { id, user_id: 'ann', user_created_at: 'u1', parts: [], room_created_at: 'r1', created_at: 't' },
  });

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
    given(sent(5)).when(send).thenThrows(StaleMessageIdError, { lastId: 5 });
    given(sent(5)).when({ ...send, id: 6 }).then([sentBySend(6)]);
  });

  it('folds from the newest MessageSent: older timelines also hold edits and deletions', () => {
    const deletion: MessageEvent = { type: 'MessageDeleted', data: { id: 4, tombstone: false, deleted_at: 't' } };
    expect(timelineDecider.foldsFrom!(sent(1))).toBe(true);
    expect(timelineDecider.foldsFrom!(deletion)).toBe(false);
    given(sent(4), deletion).when(send).then([sentBySend(5)]);
  });
});

describe('messageDecider', () => {
  const given = deciderSpecification(messageDecider);
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
  const edited: MessageEvent = { type: 'MessageEdited', data: { id: 9, room_id: 'lobby', parts: [{ type: 'text/plain', content: 'new' }], updated_at: 't2' } };
  const deleted: MessageEvent = { type: 'MessageDeleted', data: { id: 9, room_id: 'lobby', tombstone: false, deleted_at: 't2' } };
  const notSender = { code: 'forbidden/not_message_sender' };

  it('edits and deletes for the sender, naming the room in the event', () => {
    given().when(edit).then([edited]);
    given().when(remove).then([deleted]);
  });

  it('lets su change anyone’s message and forbids other users', () => {
    given().when({ ...edit, actor: { userCreatedAt: null, su: true } }).then([edited]);
    given()
      .when({ ...edit, actor: { userId: 'bob', userCreatedAt: '2026-01-01T00:00:00.000Z', su: false } })
      .thenThrows(DomainError, notSender);
  });

  it('forbids a later user of the sender’s id (deleted, then created again) and a deleted sender', () => {
    const reborn = { userId: 'ann', userCreatedAt: '2026-01-03T00:00:00.000Z', su: false };
    for (const command of [edit, remove]) {
      given().when({ ...command, actor: reborn }).thenThrows(DomainError, notSender);
      given().when({ ...command, actor: { ...reborn, userCreatedAt: null } }).thenThrows(DomainError, notSender);
    }
  });

  it('tells the sender of a message logged without its incarnation by when each came to be', () => {
    const legacy = { userId: 'ann', roomCreatedAt: 'r1', createdAt: '2026-01-02T00:00:00.000Z' };
    const sender = { userId: 'ann', userCreatedAt: '2026-01-01T00:00:00.000Z', su: false };
    given().when({ ...edit, sent: legacy, actor: sender }).then([edited]);
    const reborn = { ...sender, userCreatedAt: '2026-01-03T00:00:00.000Z' };
    given().when({ ...edit, sent: legacy, actor: reborn }).thenThrows(DomainError, notSender);
  });

  it('answers not found for a message the timeline lacks, one of an earlier room of the same id, or a deleted one', () => {
    const notFound = { code: 'not_found/message_not_found' };
    given().when({ ...edit, sent: null }).thenThrows(DomainError, notFound);
    given().when({ ...edit, roomCreatedAt: 'r2' }).thenThrows(DomainError, notFound);
    expect(fold(messageDecider, [deleted])).toEqual({ deleted: true, reactions: new Map() });
    given(deleted).when(edit).thenThrows(DomainError, notFound);
    given(deleted).when(remove).thenThrows(DomainError, notFound);
  });
});

describe('messageDecider: reactions', () => {
  const given = deciderSpecification(messageDecider);
  const ben = { userId: 'ben', userCreatedAt: 'u2' };
  const base = {
    id: 9,
    roomId: 'lobby',
    sent: { userId: 'ann', userCreatedAt: 'u1', roomCreatedAt: 'r1', createdAt: 't1' },
    roomCreatedAt: 'r1',
    actor: { userId: 'ben', userCreatedAt: 'u2', su: false },
    now: 't2',
  };
  const add = (reaction: string, reactor = ben): MessageCommand => ({ ...base, type: 'AddReaction', reaction, reactor });
  const removeOf = (reaction: string, reactor = ben): MessageCommand => ({ ...base, type: 'RemoveReaction', reaction, reactor });
  const added = (type: string, reactor = ben): MessageEvent | ReactionEvent => ({
    type: 'MessageReactionAdded',
    data: { id: 9, room_id: 'lobby', type, user_id: reactor.userId, user_created_at: reactor.userCreatedAt, created_at: 't2' },
  });
  const removed = (type: string, reactor = ben): MessageEvent | ReactionEvent => ({
    type: 'MessageReactionRemoved',
    data: { id: 9, room_id: 'lobby', type, user_id: reactor.userId, user_created_at: reactor.userCreatedAt, removed_at: 't2' },
  });

  it('adds and removes idempotently: a reaction held is not added again, one not held is not removed', () => {
    given().when(add('👍')).then([added('👍')]);
    given(added('👍')).when(add('👍')).then([]);
    given(added('👍')).when(removeOf('👍')).then([removed('👍')]);
    given().when(removeOf('👍')).then([]);
    given(added('👍'), removed('👍')).when(add('👍')).then([added('👍')]);
  });

  it('keeps a later user of the same id apart from the one who reacted', () => {
    const reborn = { userId: 'ben', userCreatedAt: 'u3' };
    given(added('👍')).when(add('👍', reborn)).then([added('👍', reborn)]);
    given(added('👍')).when(removeOf('👍', reborn)).then([]);
  });

  it(`refuses a new type past ${MAX_REACTION_TYPES} distinct ones, long or spaced types, and a deleted message`, () => {
    const full = Array.from({ length: MAX_REACTION_TYPES }, (_, i) => added(`t${i}`));
    given(...full).when(add('one-more')).thenThrows(DomainError, { code: 'unprocessable_entity/too_many_reaction_types' });
    given(...full).when(add('t3', { userId: 'cat', userCreatedAt: 'u4' })).then([added('t3', { userId: 'cat', userCreatedAt: 'u4' })]);
    given().when(add('x'.repeat(MAX_REACTION_TYPE_LENGTH + 1))).thenThrows(DomainError, { code: 'unprocessable_entity/reaction_type_too_long' });
    given().when(add('👨‍👩‍👧‍👦')).then([added('👨‍👩‍👧‍👦')]);
    for (const bad of ['', 'a b', 'tab\t', 'nl\n']) given().when(add(bad)).thenThrows(DomainError, { code: 'unprocessable_entity/invalid_reaction_type' });
    const deletion: MessageEvent = { type: 'MessageDeleted', data: { id: 9, room_id: 'lobby', tombstone: false, deleted_at: 't3' } };
    given(added('👍'), deletion).when(add('👍')).thenThrows(DomainError, { code: 'not_found/message_not_found' });
    given().when({ ...add('👍'), sent: null }).thenThrows(DomainError, { code: 'not_found/message_not_found' });
  });

  it('under a shadow ban, adds and removes for the reactor alone; the cap counts the types each reactor sees', () => {
    const shadowed = (event: MessageEvent | ReactionEvent) => ({ ...event, data: { ...event.data, shadow: true } }) as MessageEvent | ReactionEvent;
    const addShadowed = (reaction: string): MessageCommand => ({ ...base, type: 'AddReaction', reaction, reactor: ben, shadow: true });
    given().when(addShadowed('👍')).then([shadowed(added('👍'))]);
    given(shadowed(added('👍'))).when(addShadowed('👍')).then([]);
    // Its removal says it was shadowed, ban or no ban now; once the ban is lifted, adding it again adds it for everyone.
    given(shadowed(added('👍'))).when(removeOf('👍')).then([shadowed(removed('👍'))]);
    given(shadowed(added('👍'))).when(add('👍')).then([added('👍')]);
    given(added('👍')).when(addShadowed('👍')).then([]);
    const full = Array.from({ length: MAX_REACTION_TYPES }, (_, i) => shadowed(added(`t${i}`)));
    const cat = { userId: 'cat', userCreatedAt: 'u4' };
    given(...full).when(add('one-more', cat)).then([added('one-more', cat)]);
    given(...full).when(addShadowed('one-more')).thenThrows(DomainError, { code: 'unprocessable_entity/too_many_reaction_types' });
    // A message sent under someone else's shadow ban is not there for the reactor (su aside).
    const hidden = { ...base.sent, shadow: true as const };
    given().when({ ...add('👍'), sent: hidden }).thenThrows(DomainError, { code: 'not_found/message_not_found' });
    given().when({ ...add('👍', { userId: 'ann', userCreatedAt: 'u1' }), sent: hidden }).then([added('👍', { userId: 'ann', userCreatedAt: 'u1' })]);
  });

  it('counts no erased reaction (its key destroyed by an erasure)', () => {
    const full = Array.from({ length: MAX_REACTION_TYPES }, (_, i) => added(i === 0 ? '' : `t${i}`));
    given(...full).when(add('fits')).then([added('fits')]);
  });

  it('folds reactions from the stream start, or from a deletion', () => {
    expect(messageDecider.foldsFrom!(added('👍') as MessageEvent)).toBe(false);
    expect(messageDecider.foldsFrom!({ type: 'MessageDeleted', data: { id: 9, tombstone: false, deleted_at: 't' } })).toBe(true);
  });
});

describe('idBlockDecider', () => {
  const given = deciderSpecification(idBlockDecider);
  it('reserves the next block of ids above the last one reserved', () => {
    given().when({ type: 'ReserveIds', size: 1000 }).then([{ type: 'MessageIdsReserved', data: { first: 1, last: 1000 } }]);
    given({ type: 'MessageIdsReserved', data: { first: 1, last: 1000 } })
      .when({ type: 'ReserveIds', size: 10 })
      .then([{ type: 'MessageIdsReserved', data: { first: 1001, last: 1010 } }]);
  });

  it('refuses an empty block', () => {
    given().when({ type: 'ReserveIds', size: 0 }).thenThrows(DomainError, { code: 'bad_request/invalid_block' });
  });

  it('folds from the newest block: it holds the highest id', () => {
    expect(idBlockDecider.foldsFrom!({ type: 'MessageIdsReserved', data: { first: 1, last: 1000 } })).toBe(true);
  });
});

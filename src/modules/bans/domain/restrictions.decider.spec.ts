import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { RestrictionEvent } from './restriction.events';
import { isFrozen, restrictionsDecider, RestrictionsCommand, standingBan } from './restrictions.decider';

describe('restrictionsDecider', () => {
  const given = deciderSpecification(restrictionsDecider);
  const now = '2026-01-01T00:00:00.000Z';
  const later = '2027-01-01T00:00:00.000Z';
  const ban = (extra: Partial<Extract<RestrictionsCommand, { type: 'BanUser' }>> = {}): RestrictionsCommand => ({
    type: 'BanUser',
    roomId: 'r',
    roomCreatedAt: 'r1',
    userId: 'ben',
    userCreatedAt: 'u1',
    reason: 'spam',
    shadow: false,
    bannedBy: 'mod',
    now,
    ...extra,
  });
  const banned = (extra: Partial<Extract<RestrictionEvent, { type: 'UserBanned' }>['data']> = {}): RestrictionEvent => ({
    type: 'UserBanned',
    data: { room_id: 'r', room_created_at: 'r1', user_id: 'ben', user_created_at: 'u1', reason: 'spam', shadow: false, banned_by: 'mod', banned_at: now, ...extra },
  });
  const unban: RestrictionsCommand = { type: 'UnbanUser', roomId: 'r', roomCreatedAt: 'r1', userId: 'ben', userCreatedAt: 'u1', now };
  const unbanned: RestrictionEvent = { type: 'UserUnbanned', data: { room_id: 'r', room_created_at: 'r1', user_id: 'ben', user_created_at: 'u1', unbanned_at: now } };

  it('bans and lifts idempotently; banning again with other terms records them', () => {
    given().when(ban()).then([banned()]);
    given(banned()).when(ban()).then([]);
    given(banned()).when(ban({ shadow: true, until: later })).then([banned({ shadow: true, until: later })]);
    given(banned()).when(unban).then([unbanned]);
    given().when(unban).then([]);
  });

  it('refuses a ban of oneself and an until that is not ahead', () => {
    given().when(ban({ bannedBy: 'ben' })).thenThrows(DomainError, { code: 'unprocessable_entity/cannot_ban_self' });
    given().when(ban({ until: now })).thenThrows(DomainError, { code: 'unprocessable_entity/invalid_until' });
  });

  it('a ban holds on its user and room incarnations only, until its end', () => {
    const state = restrictionsDecider.evolve(restrictionsDecider.initialState(), banned({ until: later }) as never);
    expect(standingBan(state, 'ben', 'u1', 'r1', now)).toMatchObject({ reason: 'spam', until: later });
    expect(standingBan(state, 'ben', 'u2', 'r1', now)).toBeUndefined();
    expect(standingBan(state, 'ben', 'u1', 'r2', now)).toBeUndefined();
    expect(standingBan(state, 'ben', 'u1', 'r1', later)).toBeUndefined();
    // A ban of an earlier room incarnation is not lifted by this one's unban.
    given(banned({ room_created_at: 'r0' })).when(unban).then([]);
  });

  it('freezes and unfreezes a room incarnation idempotently', () => {
    const freeze: RestrictionsCommand = { type: 'FreezeRoom', roomId: 'r', roomCreatedAt: 'r1', frozenBy: 'mod', now };
    const frozen: RestrictionEvent = { type: 'RoomFrozen', data: { room_id: 'r', room_created_at: 'r1', frozen_by: 'mod', frozen_at: now } };
    given().when(freeze).then([frozen]);
    given(frozen).when(freeze).then([]);
    given(frozen).when({ type: 'UnfreezeRoom', roomId: 'r', roomCreatedAt: 'r1', now }).then([{ type: 'RoomUnfrozen', data: { room_id: 'r', room_created_at: 'r1', unfrozen_at: now } }]);
    given().when({ type: 'UnfreezeRoom', roomId: 'r', roomCreatedAt: 'r1', now }).then([]);
    const state = restrictionsDecider.evolve(restrictionsDecider.initialState(), frozen as never);
    expect([isFrozen(state, 'r1'), isFrozen(state, 'r2')]).toEqual([true, false]);
  });
});

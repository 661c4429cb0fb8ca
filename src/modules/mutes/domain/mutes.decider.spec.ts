import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { MuteEvent } from './mute.events';
import { MAX_MUTES_PER_USER, MutesCommand, mutesDecider } from './mutes.decider';

describe('mutesDecider', () => {
  const given = deciderSpecification(mutesDecider);
  const now = 't';
  const me = (userCreatedAt = 'a1') => ({ userId: 'ann', userCreatedAt });
  const mute = (id: string, mutedCreatedAt = 'b1', userCreatedAt = 'a1'): MutesCommand => ({ type: 'MuteUser', user: me(userCreatedAt), muted: { userId: id, userCreatedAt: mutedCreatedAt }, now });
  const unmute = (id: string): MutesCommand => ({ type: 'UnmuteUser', user: me(), mutedUserId: id, now });
  const muted = (id: string, mutedCreatedAt = 'b1', userCreatedAt = 'a1'): MuteEvent => ({
    type: 'UserMuted',
    data: { user_id: 'ann', user_created_at: userCreatedAt, muted_user_id: id, muted_user_created_at: mutedCreatedAt, muted_at: now },
  });
  const unmuted = (id: string): MuteEvent => ({ type: 'UserUnmuted', data: { user_id: 'ann', user_created_at: 'a1', muted_user_id: id, unmuted_at: now } });

  it('mutes and unmutes idempotently; nobody mutes themselves', () => {
    given().when(mute('ben')).then([muted('ben')]);
    given(muted('ben')).when(mute('ben')).then([]);
    given(muted('ben')).when(unmute('ben')).then([unmuted('ben')]);
    given().when(unmute('ben')).then([]);
    given().when(mute('ann')).thenThrows(DomainError, { code: 'unprocessable_entity/cannot_mute_self' });
  });

  it('a user created again (muter or muted) is another person: mutes do not carry over', () => {
    given(muted('ben', 'b0')).when(mute('ben')).then([muted('ben')]);
    given(muted('ben', 'b1', 'a0')).when(mute('ben')).then([muted('ben')]);
    given(muted('ben', 'b1', 'a0')).when(unmute('ben')).then([]);
  });

  it(`caps mutes at ${MAX_MUTES_PER_USER}`, () => {
    const full = Array.from({ length: MAX_MUTES_PER_USER }, (_, i) => muted(`u${i}`));
    given(...full).when(mute('ben')).thenThrows(DomainError, { code: 'unprocessable_entity/too_many_mutes' });
    given(...full).when(mute('u3', 'b2')).then([muted('u3', 'b2')]);
  });
});

import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { mutesProjection } from './mutes.projection';

describe('mutes projection', () => {
  const muted = (user: string, mutedUser: string) =>
    recorded(`mutes-acme.${user}`, 'UserMuted', { user_id: user, user_created_at: 'c', muted_user_id: mutedUser, muted_user_created_at: 'c', muted_at: 't' });

  it('keeps who muted whom; an unmute, and a delete of either user, forget the mute', async () => {
    const docs = await project(mutesProjection, [
      muted('ann', 'ben'),
      muted('ann', 'cy'),
      muted('ann', 'dee'),
      muted('eve', 'ann'),
      muted('eve', 'ben'),
      recorded('mutes-acme.ann', 'UserUnmuted', { user_id: 'ann', user_created_at: 'c', muted_user_id: 'cy', unmuted_at: 't' }),
      recorded('user-acme.dee', 'UserDeleted', { deleted_at: 't' }),
      recorded('user-acme.eve', 'UserDeleted', { deleted_at: 't' }),
    ]);
    expect([...docs.values()].map((d) => `${d.user_id}>${d.muted_user_id}`)).toEqual(['ann>ben']);
  });
});

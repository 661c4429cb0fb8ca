import { Decider } from '../../../shared/domain/decider';
import { unprocessable } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { MuteEvent } from './mute.events';

/** A user's mutes: one short stream per muting user id. */
export const mutesStream = (instanceId: string, userId: string) => streamName('mutes', instanceId, userId);

/** Users one user may mute at once (Discord's block list is a thousand too). */
export const MAX_MUTES_PER_USER = 1000;

interface Mute {
  readonly userCreatedAt: string;
  readonly mutedUserCreatedAt: string;
}

/** Who the user id muted, by muted user id, for every incarnation of the muter (a decision reads only its own). */
export interface MutesState {
  readonly mutes: ReadonlyMap<string, Mute>;
}

export type MutesCommand =
  | { type: 'MuteUser'; user: { userId: string; userCreatedAt: string }; muted: { userId: string; userCreatedAt: string }; now: string }
  | { type: 'UnmuteUser'; user: { userId: string; userCreatedAt: string }; mutedUserId: string; now: string };

/** Decides one user's mutes: muting again or unmuting who is not muted changes nothing; nobody mutes themselves. */
export const mutesDecider: Decider<MutesState, MutesCommand, MuteEvent> = {
  initialState: () => ({ mutes: new Map() }),
  evolve(state, event) {
    const mutes = new Map(state.mutes);
    if (event.type === 'UserMuted') {
      mutes.set(event.data.muted_user_id, { userCreatedAt: event.data.user_created_at, mutedUserCreatedAt: event.data.muted_user_created_at });
    } else {
      mutes.delete(event.data.muted_user_id);
    }
    return { mutes };
  },

  decide(command, state) {
    const { user, now } = command;
    const mine = (mute: Mute | undefined): mute is Mute => mute !== undefined && mute.userCreatedAt === user.userCreatedAt;
    if (command.type === 'UnmuteUser') {
      if (!mine(state.mutes.get(command.mutedUserId))) return [];
      return [{ type: 'UserUnmuted', data: { user_id: user.userId, user_created_at: user.userCreatedAt, muted_user_id: command.mutedUserId, unmuted_at: now } }];
    }
    const { muted } = command;
    if (muted.userId === user.userId) throw unprocessable('cannot_mute_self', 'A user cannot mute themselves');
    const current = state.mutes.get(muted.userId);
    if (mine(current) && current.mutedUserCreatedAt === muted.userCreatedAt) return [];
    if (!mine(current) && [...state.mutes.values()].filter(mine).length >= MAX_MUTES_PER_USER) {
      throw unprocessable('too_many_mutes', `A user may mute at most ${MAX_MUTES_PER_USER} users`);
    }
    return [
      {
        type: 'UserMuted',
        data: { user_id: user.userId, user_created_at: user.userCreatedAt, muted_user_id: muted.userId, muted_user_created_at: muted.userCreatedAt, muted_at: now },
      },
    ];
  },
};

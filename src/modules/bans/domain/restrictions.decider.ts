import { Decider } from '../../../shared/domain/decider';
import { unprocessable } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { RestrictionEvent, UserBanned } from './restriction.events';

/** A room's bans and its freeze: one short stream per room. */
export const roomRestrictionsStream = (instanceId: string, roomId: string) => streamName('restrictions', instanceId, `room.${roomId}`);
/** The instance's bans: one stream per instance. */
export const instanceRestrictionsStream = (instanceId: string) => streamName('restrictions', instanceId, 'instance');

/** Longest reason a ban keeps (characters). */
export const MAX_BAN_REASON = 500;

export interface Ban {
  readonly userId: string;
  readonly userCreatedAt: string;
  /** The room incarnation (absent: an instance ban). */
  readonly roomCreatedAt?: string;
  readonly reason: string;
  readonly shadow: boolean;
  readonly bannedBy?: string;
  readonly bannedAt: string;
  readonly until?: string;
}

/** A room's (or the instance's) bans by user id, and the room incarnation frozen (if any). */
export interface RestrictionsState {
  readonly bans: ReadonlyMap<string, Ban>;
  readonly frozen?: string;
}

export type RestrictionsCommand =
  | {
      type: 'BanUser';
      roomId?: string;
      roomCreatedAt?: string;
      userId: string;
      userCreatedAt: string;
      reason: string;
      shadow: boolean;
      until?: string;
      bannedBy?: string;
      now: string;
    }
  | { type: 'UnbanUser'; roomId?: string; roomCreatedAt?: string; userId: string; userCreatedAt: string; now: string }
  | { type: 'FreezeRoom'; roomId: string; roomCreatedAt: string; frozenBy?: string; now: string }
  | { type: 'UnfreezeRoom'; roomId: string; roomCreatedAt: string; now: string };

/**
 * The ban that holds on the user incarnation at `now` (of this room incarnation, not past its
 * `until`), if any. A ban ends by itself: nothing needs to run at `until`.
 */
export const standingBan = (
  state: RestrictionsState,
  userId: string,
  userCreatedAt: string | null | undefined,
  roomCreatedAt: string | undefined,
  now: string,
): Ban | undefined => {
  const ban = state.bans.get(userId);
  if (!ban || ban.userCreatedAt !== userCreatedAt || ban.roomCreatedAt !== roomCreatedAt) return undefined;
  return ban.until === undefined || ban.until > now ? ban : undefined;
};

/** Whether the room incarnation is frozen. */
export const isFrozen = (state: RestrictionsState, roomCreatedAt: string): boolean => state.frozen === roomCreatedAt;

export const cannotBanSelf = () => unprocessable('cannot_ban_self', 'A user cannot ban themselves');

const scopeOf = (roomId: string | undefined, roomCreatedAt: string | undefined) =>
  roomId !== undefined && roomCreatedAt !== undefined ? { room_id: roomId, room_created_at: roomCreatedAt } : {};

/** Decides bans (idempotent: banning again with the same terms, or lifting what is not standing, changes nothing) and freezes. */
export const restrictionsDecider: Decider<RestrictionsState, RestrictionsCommand, RestrictionEvent> = {
  initialState: () => ({ bans: new Map() }),
  evolve(state, event) {
    switch (event.type) {
      case 'UserBanned': {
        const { data } = event;
        const bans = new Map(state.bans);
        bans.set(data.user_id, banOf(data));
        return { ...state, bans };
      }
      case 'UserUnbanned': {
        const bans = new Map(state.bans);
        bans.delete(event.data.user_id);
        return { ...state, bans };
      }
      case 'RoomFrozen':
        return { ...state, frozen: event.data.room_created_at };
      case 'RoomUnfrozen': {
        const { frozen: _frozen, ...rest } = state;
        return rest;
      }
    }
  },

  decide(command, state) {
    const scope = scopeOf(command.roomId, command.roomCreatedAt);
    switch (command.type) {
      case 'BanUser': {
        if (command.bannedBy === command.userId) throw cannotBanSelf();
        if (command.until !== undefined && command.until <= command.now) {
          throw unprocessable('invalid_until', 'until must be a time in the future (RFC 3339)');
        }
        const current = standingBan(state, command.userId, command.userCreatedAt, command.roomCreatedAt, command.now);
        if (current && current.reason === command.reason && current.shadow === command.shadow && current.until === command.until) return [];
        return [
          {
            type: 'UserBanned',
            data: {
              ...scope,
              user_id: command.userId,
              user_created_at: command.userCreatedAt,
              reason: command.reason,
              shadow: command.shadow,
              ...(command.bannedBy !== undefined && { banned_by: command.bannedBy }),
              banned_at: command.now,
              ...(command.until !== undefined && { until: command.until }),
            },
          },
        ];
      }
      case 'UnbanUser':
        if (!standingBan(state, command.userId, command.userCreatedAt, command.roomCreatedAt, command.now)) return [];
        return [{ type: 'UserUnbanned', data: { ...scope, user_id: command.userId, user_created_at: command.userCreatedAt, unbanned_at: command.now } }];
      case 'FreezeRoom':
        if (isFrozen(state, command.roomCreatedAt)) return [];
        return [
          {
            type: 'RoomFrozen',
            data: { room_id: command.roomId, room_created_at: command.roomCreatedAt, ...(command.frozenBy !== undefined && { frozen_by: command.frozenBy }), frozen_at: command.now },
          },
        ];
      case 'UnfreezeRoom':
        if (!isFrozen(state, command.roomCreatedAt)) return [];
        return [{ type: 'RoomUnfrozen', data: { room_id: command.roomId, room_created_at: command.roomCreatedAt, unfrozen_at: command.now } }];
    }
  },
};

const banOf = (data: UserBanned['data']): Ban => ({
  userId: data.user_id,
  userCreatedAt: data.user_created_at,
  ...(data.room_created_at !== undefined && { roomCreatedAt: data.room_created_at }),
  reason: data.reason,
  shadow: data.shadow,
  ...(data.banned_by !== undefined && { bannedBy: data.banned_by }),
  bannedAt: data.banned_at,
  ...(data.until !== undefined && { until: data.until }),
});

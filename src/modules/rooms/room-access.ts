import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { forbidden } from '../../shared/domain/errors';
import { Actor } from '../../shared/domain/event';
import { RolePermissions } from '../roles/role-permissions';
import { userDecider, userStream } from '../users/domain/user.decider';
import { isMember, roomDecider, roomNotFound, RoomState, roomStream } from './domain/room.decider';

export interface ExistingRoom extends RoomState {
  readonly createdAt: string;
}

/** Who asks about a room: the token's user (if any), and whether the token is su. */
export interface RoomCaller {
  readonly userId?: string;
  readonly su: boolean;
}

/** The caller a command's audit actor names. */
export const callerOf = (actor: Actor): RoomCaller => ({ userId: actor.user_id, su: actor.su === true });

const notAMember = (userId: string, roomId: string) =>
  forbidden('not_a_member', `The user "${userId}" is not a member of the room "${roomId}"`);

/**
 * Who may read, write or manage a room, decided on write-side state (the room's and the
 * user's own streams, never a lagging read model). Membership counts only for the user who
 * joined, not for a later user re-created with the same id.
 *
 * A private room exists only for its members and su: to anyone else every route answers as
 * for a room that does not exist (404 room_not_found), so no answer confirms that it exists.
 */
@Injectable()
export class RoomAccess {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly roles: RolePermissions,
  ) {}

  async room(instanceId: string, roomId: string): Promise<ExistingRoom> {
    const { state } = await this.pipeline.load(roomStream(instanceId, roomId), roomDecider);
    if (!state.exists) throw roomNotFound(roomId);
    return state as ExistingRoom;
  }

  async isMember(instanceId: string, room: RoomState, userId: string): Promise<boolean> {
    if (!room.members.has(userId)) return false;
    const { state: user } = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    return user.exists && isMember(room, { user_id: userId, user_created_at: user.createdAt! });
  }

  /** Public rooms are open to any token; private ones to members and su (404 to anyone else). */
  async readable(instanceId: string, roomId: string, caller: RoomCaller): Promise<ExistingRoom> {
    const room = await this.room(instanceId, roomId);
    if (room.private && !caller.su && !(caller.userId && (await this.isMember(instanceId, room, caller.userId)))) {
      throw roomNotFound(roomId);
    }
    return room;
  }

  /** Writing as a user (sending, typing, uploading) needs membership, unless `su` waives it. */
  async writableAs(instanceId: string, roomId: string, userId: string, su: boolean): Promise<ExistingRoom> {
    const room = await this.room(instanceId, roomId);
    if (su || (await this.isMember(instanceId, room, userId))) return room;
    throw room.private ? roomNotFound(roomId) : notAMember(userId, roomId);
  }

  /**
   * Adding and removing members needs su, membership, or a role scoped to the room (a
   * moderator need not be in it): a stranger must not let themselves in or put members out.
   */
  async manageable(instanceId: string, roomId: string, caller: RoomCaller): Promise<ExistingRoom> {
    const room = await this.room(instanceId, roomId);
    if (caller.su) return room;
    const userId = caller.userId;
    if (userId && ((await this.isMember(instanceId, room, userId)) || (await this.roles.hasRoomRole(instanceId, userId, roomId)))) {
      return room;
    }
    if (room.private) throw roomNotFound(roomId);
    throw forbidden(
      'not_a_member',
      `Only members of the room "${roomId}" (or holders of a role in it) may add or remove its members`,
    );
  }
}

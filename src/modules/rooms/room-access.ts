import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/command-pipeline';
import { forbidden } from '../../shared/domain/errors';
import { RequestActor } from '../instances/authentication/access-token';
import { userDecider, userStream } from '../users/domain/user.decider';
import { isMember, roomDecider, roomNotFound, RoomState, roomStream } from './domain/room.decider';

export interface ExistingRoom extends RoomState {
  readonly createdAt: string;
}

/**
 * Who may read or write a room, decided on write-side state (the room's and the user's own
 * streams, never a lagging read model). Membership counts only for the user who joined, not
 * for a later user re-created with the same id.
 */
@Injectable()
export class RoomAccess {
  constructor(private readonly pipeline: CommandPipeline) {}

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

  /** Public rooms are open to any token; private ones to members and su. */
  async readable(instanceId: string, roomId: string, actor: RequestActor): Promise<ExistingRoom> {
    const room = await this.room(instanceId, roomId);
    if (room.private && !actor.su && !(actor.userId && (await this.isMember(instanceId, room, actor.userId)))) {
      throw forbidden('not_a_member', `The room "${roomId}" is private and the token's user is not a member`);
    }
    return room;
  }

  /** Writing as a user (sending, typing, uploading) needs membership, unless `su` waives it. */
  async writableAs(instanceId: string, roomId: string, userId: string, su: boolean): Promise<ExistingRoom> {
    const room = await this.room(instanceId, roomId);
    if (!su && !(await this.isMember(instanceId, room, userId))) {
      throw forbidden('not_a_member', `The user "${userId}" is not a member of the room "${roomId}"`);
    }
    return room;
  }
}

import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/command-pipeline';
import { forbidden } from '../../shared/domain/errors';
import { RequestActor } from '../instances/authentication/access-token';
import { roomDecider, roomNotFound, RoomState, roomStream } from './domain/room.decider';

export interface ExistingRoom extends RoomState {
  readonly createdAt: string;
}

/** Who may read or write a room, decided on the room's own stream (write-side state). */
@Injectable()
export class RoomAccess {
  constructor(private readonly pipeline: CommandPipeline) {}

  async room(instanceId: string, roomId: string): Promise<ExistingRoom> {
    const { state } = await this.pipeline.load(roomStream(instanceId, roomId), roomDecider);
    if (!state.exists) throw roomNotFound(roomId);
    return state as ExistingRoom;
  }

  /** Public rooms are open to any token; private ones to members and su. */
  async readable(instanceId: string, roomId: string, actor: RequestActor): Promise<ExistingRoom> {
    const room = await this.room(instanceId, roomId);
    if (room.private && !actor.su && !(actor.userId && room.members.has(actor.userId))) {
      throw forbidden('not_a_member', `The room "${roomId}" is private and the token's user is not a member`);
    }
    return room;
  }

  /** Writing as a user (sending, typing) needs membership, unless the token is su. */
  async writableAs(instanceId: string, roomId: string, userId: string, actor: RequestActor): Promise<ExistingRoom> {
    const room = await this.room(instanceId, roomId);
    if (!actor.su && !room.members.has(userId)) {
      throw forbidden('not_a_member', `The user "${userId}" is not a member of the room "${roomId}"`);
    }
    return room;
  }
}

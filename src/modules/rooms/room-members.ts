import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { notFound } from '../../shared/domain/errors';
import { userDecider, userStream } from '../users/domain/user.decider';
import { RoomMember } from './domain/room.events';

/**
 * Turns user ids into room members by reading the users' own streams (write-side state,
 * never a lagging read model), failing with 404 when any of them does not exist.
 */
@Injectable()
export class RoomMembers {
  constructor(private readonly pipeline: CommandPipeline) {}

  async resolve(instanceId: string, userIds: readonly string[]): Promise<RoomMember[]> {
    const unique = [...new Set(userIds)];
    const states = await Promise.all(unique.map((id) => this.pipeline.load(userStream(instanceId, id), userDecider)));
    const missing = unique.filter((_, i) => !states[i].state.exists);
    if (missing.length) {
      throw notFound(
        'user_not_found',
        `${missing.length === 1 ? 'The user' : 'The users'} ${missing.map((m) => `"${m}"`).join(', ')} ${missing.length === 1 ? 'does' : 'do'} not exist`,
      );
    }
    return unique.map((user_id, i) => ({ user_id, user_created_at: states[i].state.createdAt! }));
  }
}

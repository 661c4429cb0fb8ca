import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { userDecider, userStream } from '../../users/domain/user.decider';
import { RequestActor, unauthorized } from './access-token';

/**
 * A user token names its user by id only. Once that user is deleted, the tokens issued before
 * the deletion act for no one: not for the deleted user, and not for a new user created later
 * with the same id. Tokens say when they were issued to the second (`iat`), so a token issued
 * in the very second of the deletion still counts; one without `iat` cannot tell and is refused
 * once its user id was ever deleted. su tokens are the app server's own and are not checked.
 *
 * Read from the user's stream (the command pipeline's state cache: one read per turn of the
 * event loop at most), never from a lagging read model: a deletion answered is in force.
 */
@Injectable()
export class TokenStanding {
  constructor(private readonly pipeline: CommandPipeline) {}

  async require(actor: RequestActor): Promise<void> {
    if (actor.su || actor.userId === undefined) return;
    const { state } = await this.pipeline.load(userStream(actor.instanceId, actor.userId), userDecider);
    if (state.deletedAt === null) return;
    const deletedInSecond = Math.floor(Date.parse(state.deletedAt) / 1000);
    if (actor.issuedAt !== undefined && actor.issuedAt >= deletedInSecond) return;
    throw unauthorized(
      'token_revoked',
      `The token was issued before the user "${actor.userId}" was deleted; it acts for no one now. Get a new token`,
    );
  }
}

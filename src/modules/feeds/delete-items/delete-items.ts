import { Controller, Delete, Headers, HttpCode, Inject, Param } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { RequestId } from '../../../shared/http/request-id';
import { actingInRequest } from '../../../shared/observability/request-context';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { feedDecider, feedStream, requireFeedId } from '../domain/feed.decider';
import { FeedAccess } from '../feeds-tokens/feed-access';
import { FEEDS_ROUTE, feedItemsPath } from '../feeds-route';
import { FEED_READS } from '../feeds.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class DeleteItemsCommand {
  constructor(
    readonly instanceId: string,
    readonly feedId: string,
    readonly actor: Actor,
  ) {}
}

/** Deletes every item of the feed; later items get higher ids than any deleted one. */
@CommandHandler(DeleteItemsCommand)
export class DeleteItemsHandler implements ICommandHandler<DeleteItemsCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, feedId, actor }: DeleteItemsCommand): Promise<void> {
    const now = this.clock.now();
    await this.pipeline.run(
      feedStream(instanceId, feedId),
      feedDecider,
      { type: 'DeleteItems', now },
      { instance_id: instanceId, actor, occurred_at: now.toISOString() },
      { awaitProjections: FEED_READS },
    );
  }
}

/** `DELETE /feeds/<id>/items` (pusher-feeds-server's `delete`, which ignores the body): 200 `{}`. */
@Controller(FEEDS_ROUTE)
export class DeleteItemsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly access: FeedAccess,
  ) {}

  @Delete('feeds/:feedId/items')
  @Requires(Access.ownCredential('a Feeds token granting WRITE on the feed (FeedAccess)'))
  @HttpCode(200)
  async delete(
    @Param('instanceId') instanceId: string,
    @Param('feedId') feedId: string,
    @Headers('authorization') authorization: string | undefined,
    @RequestId() requestId: string,
  ): Promise<Record<string, never>> {
    requireFeedId(feedId);
    const actor = actingInRequest(await this.access.require(instanceId, authorization, feedItemsPath(feedId), 'WRITE'), requestId);
    await this.commands.execute(new DeleteItemsCommand(instanceId, feedId, actor));
    return {};
  }
}

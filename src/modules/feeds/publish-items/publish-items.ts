import { Body, Controller, Headers, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { RequestId } from '../../../shared/http/request-id';
import { actingInRequest } from '../../../shared/observability/request-context';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { badRequest } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { feedDecider, feedStream, requireFeedId } from '../domain/feed.decider';
import { FeedItemsPublished } from '../domain/feed.events';
import { FeedAccess } from '../feeds-tokens/feed-access';
import { FEEDS_ROUTE, feedItemsPath } from '../feeds-route';
import { FEED_READS } from '../feeds.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

export class PublishItemsCommand {
  constructor(
    readonly instanceId: string,
    readonly feedId: string,
    readonly items: readonly unknown[],
    readonly actor: Actor,
  ) {}
}

/** Appends the items to the feed's stream (creating the feed); answers their ids once pages show them. */
@CommandHandler(PublishItemsCommand)
export class PublishItemsHandler implements ICommandHandler<PublishItemsCommand, string[]> {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, feedId, items, actor }: PublishItemsCommand): Promise<string[]> {
    const now = this.clock.now();
    const { events } = await this.pipeline.run(
      feedStream(instanceId, feedId),
      feedDecider,
      { type: 'PublishItems', items, now },
      { instance_id: instanceId, actor, occurred_at: now.toISOString() },
      { awaitProjections: FEED_READS },
    );
    return (events[0] as FeedItemsPublished).data.items.map((item) => item.id);
  }
}

/**
 * `POST /feeds/<id>/items` with `{items: [...]}`: publish (one item) and publishBatch (in array
 * order) of pusher-feeds-server, which parses the answer as JSON. Needs a token that may write
 * the feed (the server SDK's token grants `*`).
 */
@Controller(FEEDS_ROUTE)
export class PublishItemsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly access: FeedAccess,
  ) {}

  @Post('feeds/:feedId/items')
  @Requires(Access.ownCredential('a Feeds token granting WRITE on the feed (FeedAccess)'))
  @HttpCode(200)
  async publish(
    @Param('instanceId') instanceId: string,
    @Param('feedId') feedId: string,
    @Headers('authorization') authorization: string | undefined,
    @RequestId() requestId: string,
    @Body() body: unknown,
  ): Promise<{ item_ids: string[] }> {
    requireFeedId(feedId);
    const actor = actingInRequest(await this.access.require(instanceId, authorization, feedItemsPath(feedId), 'WRITE'), requestId);
    const items = (body as { items?: unknown } | undefined)?.items;
    if (typeof body !== 'object' || body === null || !Array.isArray(items)) {
      throw badRequest('invalid_body', 'The body must be a JSON object {"items": [item, …]}');
    }
    const ids: string[] = await this.commands.execute(new PublishItemsCommand(instanceId, feedId, items, actor));
    return { item_ids: ids };
  }
}

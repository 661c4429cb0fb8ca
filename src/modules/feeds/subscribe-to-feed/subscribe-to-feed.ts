import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { unprocessable } from '../../../shared/domain/errors';
import { RecordedEvent } from '../../../shared/domain/event';
import { EPHEMERAL_BUS, EphemeralBus } from '../../../shared/ports/ephemeral-bus.port';
import { openCatchUpThenLive } from '../../../shared/subscriptions/catch-up-then-live';
import { EventChannel, WireEvent } from '../../../shared/subscriptions/event-channel';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { numericLastEventId, SubscriptionContext, SubscriptionRoutes } from '../../streaming/subscription-routes';
import { Access } from '../../roles/access-rules';
import { feedStream, requireFeedId } from '../domain/feed.decider';
import { FeedItemsPublished } from '../domain/feed.events';
import { FeedAccess } from '../feeds-tokens/feed-access';
import { firehoseSignals, FirehoseSignal } from '../feeds-firehose';
import { FEEDS_SUBSCRIPTION_BASE } from '../feeds-route';
import { FEED_READS, FeedsReadModel, OlderItems, presentItem } from '../feeds.read-model';

export const MAX_PREVIOUS_ITEMS = 1000;
/** Items read per step when a resumed subscription replays what it missed. */
const REPLAY_PAGE = 500;

/** The item frame (wire study §2.6): `{type: 1, data: item}`, its event id the item id (what `Last-Event-Id` resumes from). */
const itemEvent = (item: { id: string; created: number; data: unknown }, shared?: true): WireEvent => ({
  id: item.id,
  body: { type: 1, data: item },
  ...(shared && { shared }),
});

/**
 * `SUBSCRIBE /feeds/<id>/items[?previous_items=n]`, over HTTP SUBSCRIBE (feeds-client) and /ws
 * alike. First a `{type: 0, data: {next_cursor, remaining}}` event saying what lies before the
 * items about to follow (its id the last item id the client has seen), then the newest n items
 * oldest first — or, resuming with `Last-Event-Id`, every item after that id — then live items.
 */
@Injectable()
export class FeedSubscription implements OnModuleInit {
  /** Live items as wire events, built for the first subscriber and shared by the rest. */
  private readonly rendered = new WeakMap<RecordedEvent, WireEvent[]>();

  constructor(
    private readonly routes: SubscriptionRoutes,
    private readonly liveLog: LiveLog,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    private readonly access: FeedAccess,
    private readonly feeds: FeedsReadModel,
    @Inject(EPHEMERAL_BUS) private readonly bus: EphemeralBus,
  ) {}

  onModuleInit(): void {
    this.routes.register(
      `${FEEDS_SUBSCRIPTION_BASE}/feeds/:feedId/items`,
      Access.ownCredential('a Feeds token for private- feeds, none for public ones (FeedAccess)'),
      (context, channel) => this.open(context, channel),
    );
  }

  private async open(context: SubscriptionContext, channel: EventChannel): Promise<void> {
    const { instanceId, feedId } = context.params;
    requireFeedId(feedId);
    await this.access.readFeed(instanceId, feedId, context.headers.authorization);
    const previous = parsePreviousItems(context.query.get('previous_items'));
    const resumeAfter = numericLastEventId(context.lastEventId);
    /** The newest item id the client has: live items at or below it were sent already. */
    let lastSeq = 0;

    await openCatchUpThenLive({
      liveLog: this.liveLog,
      instanceId,
      readYourWrites: this.readYourWrites,
      channel,
      service: 'feeds',
      keys: [feedStream(instanceId, feedId)],
      projections: FEED_READS,
      readInitial: async () => {
        if (resumeAfter !== undefined) {
          // An id above the newest item comes from before an instance wipe (ids start again): replay the feed as it is now.
          const [newest] = await this.feeds.newest(instanceId, feedId, 1);
          lastSeq = resumeAfter > (newest?.seq ?? 0) ? 0 : resumeAfter;
          this.opened(channel, lastSeq, await this.feeds.olderThan(instanceId, feedId, lastSeq + 1));
          for (;;) {
            const page = await this.feeds.after(instanceId, feedId, lastSeq, REPLAY_PAGE);
            for (const doc of page) channel.push(itemEvent(presentItem(doc)));
            if (page.length) lastSeq = page[page.length - 1].seq;
            if (page.length < REPLAY_PAGE) return;
          }
        }
        const [newest] = await this.feeds.newest(instanceId, feedId, 1);
        const replay = previous > 0 ? (await this.feeds.newest(instanceId, feedId, previous)).reverse() : [];
        lastSeq = newest?.seq ?? 0;
        const before = replay.length ? replay[0].seq : lastSeq + 1;
        this.opened(channel, before - 1, await this.feeds.olderThan(instanceId, feedId, before));
        for (const doc of replay) channel.push(itemEvent(presentItem(doc)));
      },
      deliver: (event) => {
        if (event.type !== 'FeedItemsPublished') return; // a deletion removes stored items; clients keep what they saw
        for (const wire of this.liveItems(event as RecordedEvent<FeedItemsPublished>)) {
          const seq = Number(wire.id);
          if (seq <= lastSeq) continue; // shown by the initial read
          lastSeq = seq;
          channel.push(wire);
        }
      },
    });

    // The firehose sees subscriptions come and go.
    const announce = (type: FirehoseSignal['type']) => void this.bus.publish(firehoseSignals(instanceId), { type, feed_id: feedId }).catch(() => undefined);
    announce(1);
    channel.onClose(() => announce(2));
  }

  /** `{type: 0}` first: `id` is the newest item id the client has, so resuming from it misses nothing. */
  private opened(channel: EventChannel, seenSeq: number, older: OlderItems): void {
    channel.push({ id: String(seenSeq), body: { type: 0, data: older } });
  }

  private liveItems(event: RecordedEvent<FeedItemsPublished>): WireEvent[] {
    let wires = this.rendered.get(event);
    if (!wires) this.rendered.set(event, (wires = event.data.items.map((item) => itemEvent(item, true))));
    return wires;
  }
}

export const parsePreviousItems = (raw: string | null): number => {
  if (raw === null || raw === '') return 0;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > MAX_PREVIOUS_ITEMS) {
    throw unprocessable('invalid_previous_items', `previous_items must be a whole number from 0 to ${MAX_PREVIOUS_ITEMS}`);
  }
  return n;
};

import { RecordedEvent } from '../../shared/domain/event';
import { parseStreamName } from '../../shared/domain/streams';
import { FEED_STREAM_CATEGORY } from './domain/feed.decider';

/** The LiveLog key under which every publish of an instance's feeds is also delivered (the firehose follows it). */
export const firehoseKey = (instanceId: string) => `feeds-firehose:${instanceId}`;

/** The ephemeral channel on which feed subscriptions opening and closing are announced (no audit value: never logged). */
export const firehoseSignals = (instanceId: string) => `feeds-firehose:${instanceId}:subscriptions`;

/** A feed subscription opened (1) or closed (2), as the firehose shows it. */
export interface FirehoseSignal {
  readonly type: 1 | 2;
  readonly feed_id: string;
}

/** Routes each publish to its instance's firehose key. */
export const routePublishesToFirehose = (event: RecordedEvent): readonly string[] => {
  if (event.type !== 'FeedItemsPublished') return [];
  const stream = parseStreamName(event.streamName);
  return stream?.category === FEED_STREAM_CATEGORY ? [firehoseKey(stream.instanceId)] : [];
};

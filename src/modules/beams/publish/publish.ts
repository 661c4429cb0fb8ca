import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { Actor } from '../../../shared/domain/event';
import { DomainError } from '../../../shared/domain/errors';
import { BeamsDelivery } from '../delivery/beams-delivery';
import { beamsPublishDecider, beamsPublishStream } from '../domain/beams.deciders';
import { INTEREST_PUBLISHES_PER_SECOND, InterestPublishRate } from './interest-publish-rate';
import { PublishRequest } from './publish-request';

export const INTEREST_PUBLISH_RATE = Symbol('InterestPublishRate');

/** 429 with the seconds after which a publish to interests will be accepted again (`Retry-After`). */
export class TooManyPublishes extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'too_many_requests',
      'publish_rate_exceeded',
      `This instance published to interests more than ${INTEREST_PUBLISHES_PER_SECOND} times in a second; nothing was published, retry after ${retryAfterSeconds} s`,
    );
  }
}

/**
 * Accepts a publish: it becomes a `BeamsPublishAccepted` event in its own stream, and its
 * `publishId` is answered once that event is durable (no read model needs to show it first).
 */
@Injectable()
export class Publish {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(INTEREST_PUBLISH_RATE) private readonly interestRate: InterestPublishRate,
    private readonly delivery: BeamsDelivery,
  ) {}

  async accept(instanceId: string, publish: PublishRequest, actor: Actor, now: Date): Promise<string> {
    if (publish.target.kind === 'interests') {
      const wait = await this.interestRate.take(instanceId, now.getTime());
      if (wait > 0) throw new TooManyPublishes(wait);
    }
    const publishId = `pubid-${randomUUID()}`;
    const at = now.toISOString();
    await this.pipeline.run(
      beamsPublishStream(instanceId, publishId),
      beamsPublishDecider,
      { type: 'AcceptPublish', publishId, target: publish.target, request: publish.request, webhookUrl: publish.webhookUrl, now: at },
      { instance_id: instanceId, actor, occurred_at: at },
      { awaitProjections: [] },
    );
    // Durable now: delivered at once from here, not after the delivery worker's next sweep.
    this.delivery.deliverAccepted({ instance_id: instanceId, publish_id: publishId, target: publish.target, request: publish.request, accepted_at: at });
    return publishId;
  }
}

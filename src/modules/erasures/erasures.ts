import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { Actor } from '../../shared/domain/event';
import { userDecider, userNotFound, userStream } from '../users/domain/user.decider';
import { erasureDecider, erasureNotFound, ErasureState, erasureStream } from './domain/erasure.decider';
import { ErasureWorker } from './erasure-worker';

/**
 * User erasure on request (GDPR Art. 17): an erasure is a process with its own stream; the
 * request is answered once it is in the log, and the worker runs it.
 */
@Injectable()
export class Erasures {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly worker: ErasureWorker,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /**
   * Records the erasure of the user id's latest incarnation (the user as it exists, or the one
   * deleted last; 404 for an id never created), and starts it; answers its id.
   */
  async request(instanceId: string, userId: string, requestedBy: Actor): Promise<string> {
    const incarnation = (await this.pipeline.load(userStream(instanceId, userId), userDecider)).state.latestCreatedAt;
    if (incarnation === null) throw userNotFound(userId);
    const erasureId = randomUUID();
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      erasureStream(instanceId, erasureId),
      erasureDecider,
      { type: 'RequestErasure', userId, userCreatedAt: incarnation, requestedBy, now },
      { instance_id: instanceId, actor: requestedBy, occurred_at: now },
      // Its progress is read from its stream: no read model needs to show it first.
      { awaitProjections: [] },
    );
    this.worker.start(instanceId, erasureId);
    return erasureId;
  }

  /** The erasure as its stream says now (404 for one that does not exist, or was wiped with its instance). */
  async status(instanceId: string, erasureId: string): Promise<ErasureState> {
    const { state } = await this.pipeline.load(erasureStream(instanceId, erasureId), erasureDecider);
    if (state.status === null) throw erasureNotFound(erasureId);
    return state;
  }
}

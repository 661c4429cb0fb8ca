import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Inject } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { CLOCK } from '../../../shared/application/tokens';
import { instanceDecider, instanceStream } from '../domain/instance.decider';
import { KeyRing } from '../authentication/key-ring';

export class CreateInstanceCommand {
  constructor(
    readonly instanceId: string,
    readonly cluster: string,
    readonly actor: Actor,
  ) {}
}

/** Creates an instance; creating one that exists changes nothing. Answers whether it was new. */
@CommandHandler(CreateInstanceCommand)
export class CreateInstanceHandler implements ICommandHandler<CreateInstanceCommand, boolean> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly keyRing: KeyRing,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, cluster, actor }: CreateInstanceCommand): Promise<boolean> {
    const now = this.clock.now().toISOString();
    const { events } = await this.pipeline.run(
      instanceStream(instanceId),
      instanceDecider,
      { type: 'CreateInstance', id: instanceId, cluster, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
    this.keyRing.forget(instanceId);
    return events.length > 0;
  }
}

import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Inject } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { instanceDecider, instanceStream } from '../domain/instance.decider';
import { KeyRing } from '../authentication/key-ring';

export class SetInstanceEnabledCommand {
  constructor(
    readonly instanceId: string,
    readonly enabled: boolean,
    readonly actor: Actor,
  ) {}
}

/** A disabled instance answers 404 to every call; its data stays in the log and read models. */
@CommandHandler(SetInstanceEnabledCommand)
export class SetInstanceEnabledHandler implements ICommandHandler<SetInstanceEnabledCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly keyRing: KeyRing,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, enabled, actor }: SetInstanceEnabledCommand): Promise<void> {
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      instanceStream(instanceId),
      instanceDecider,
      { type: 'SetInstanceEnabled', id: instanceId, enabled, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
    this.keyRing.forget(instanceId);
  }
}

import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Inject } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { instanceDecider, instanceStream } from '../domain/instance.decider';
import { KeyRing } from '../authentication/key-ring';

export class SetTokenProviderCommand {
  constructor(
    readonly instanceId: string,
    readonly enabled: boolean,
    readonly actor: Actor,
  ) {}
}

/** Switches the instance's test token provider on or off (off by default: it is for testing only). */
@CommandHandler(SetTokenProviderCommand)
export class SetTokenProviderHandler implements ICommandHandler<SetTokenProviderCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly keyRing: KeyRing,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, enabled, actor }: SetTokenProviderCommand): Promise<void> {
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      instanceStream(instanceId),
      instanceDecider,
      { type: 'SetTokenProvider', id: instanceId, enabled, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
    this.keyRing.forget(instanceId);
  }
}

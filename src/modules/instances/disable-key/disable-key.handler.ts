import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Inject } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/command-pipeline';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { Actor } from '../../../shared/domain/event';
import { instanceDecider, instanceStream } from '../domain/instance.decider';
import { KeyRing } from '../authentication/key-ring';

export class DisableKeyCommand {
  constructor(
    readonly instanceId: string,
    readonly keyId: string,
    readonly actor: Actor,
  ) {}
}

/** Stops a key from signing valid tokens; its tokens are refused from then on. */
@CommandHandler(DisableKeyCommand)
export class DisableKeyHandler implements ICommandHandler<DisableKeyCommand, void> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly keyRing: KeyRing,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ instanceId, keyId, actor }: DisableKeyCommand): Promise<void> {
    const now = this.clock.now().toISOString();
    await this.pipeline.run(
      instanceStream(instanceId),
      instanceDecider,
      { type: 'DisableKey', id: instanceId, keyId, now },
      { instance_id: instanceId, actor, occurred_at: now },
    );
    this.keyRing.forget(instanceId);
  }
}

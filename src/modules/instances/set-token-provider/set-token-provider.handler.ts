import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../shared/domain/event';
import { InstanceChanges } from '../instance-changes';

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
  constructor(private readonly changes: InstanceChanges) {}

  async execute({ instanceId, enabled, actor }: SetTokenProviderCommand): Promise<void> {
    await this.changes.apply({ type: 'SetTokenProvider', id: instanceId, enabled }, actor);
  }
}

import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../shared/domain/event';
import { InstanceChanges } from '../instance-changes';

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
  constructor(private readonly changes: InstanceChanges) {}

  async execute({ instanceId, keyId, actor }: DisableKeyCommand): Promise<void> {
    await this.changes.apply({ type: 'DisableKey', id: instanceId, keyId }, actor);
  }
}

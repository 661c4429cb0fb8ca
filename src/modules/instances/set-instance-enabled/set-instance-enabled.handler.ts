import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../shared/domain/event';
import { InstanceChanges } from '../instance-changes';

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
  constructor(private readonly changes: InstanceChanges) {}

  async execute({ instanceId, enabled, actor }: SetInstanceEnabledCommand): Promise<void> {
    await this.changes.apply({ type: 'SetInstanceEnabled', id: instanceId, enabled }, actor);
  }
}

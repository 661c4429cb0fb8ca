import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../shared/domain/event';
import { InstanceChanges } from '../instance-changes';

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
  constructor(private readonly changes: InstanceChanges) {}

  async execute({ instanceId, cluster, actor }: CreateInstanceCommand): Promise<boolean> {
    const { events } = await this.changes.apply({ type: 'CreateInstance', id: instanceId, cluster }, actor);
    return events.length > 0;
  }
}

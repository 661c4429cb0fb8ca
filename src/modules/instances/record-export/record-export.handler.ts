import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../shared/domain/event';
import { InstanceChanges } from '../instance-changes';

export class RecordExportCommand {
  constructor(
    readonly instanceId: string,
    readonly actor: Actor,
  ) {}
}

/**
 * Records, before any of it is read, that the instance's events are being exported: an export
 * holds its content, so who took it is in the log like any other change (404 for no instance).
 */
@CommandHandler(RecordExportCommand)
export class RecordExportHandler implements ICommandHandler<RecordExportCommand, void> {
  constructor(private readonly changes: InstanceChanges) {}

  async execute({ instanceId, actor }: RecordExportCommand): Promise<void> {
    await this.changes.apply({ type: 'RecordExport', id: instanceId }, actor);
  }
}

import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Actor } from '../../../../shared/domain/event';
import { auditActor, CurrentActor } from '../../../instances/authentication/access-token.guard';
import { RequestActor } from '../../../instances/authentication/access-token';
import { AttachmentRemoval } from '../../attachment-removal';
import { AttachmentsReadModel } from '../../attachments.read-model';
import { FILES_ROUTE } from '../files-route';
import { Access } from '../../../roles/access-rules';
import { Requires } from '../../../roles/requires.decorator';

export class DeleteUserFilesCommand {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
    readonly audit: Actor,
  ) {}
}

/** Deletes every file a user uploaded through the files API, in every room of the instance. */
@CommandHandler(DeleteUserFilesCommand)
export class DeleteUserFilesHandler implements ICommandHandler<DeleteUserFilesCommand, number> {
  constructor(
    private readonly attachments: AttachmentsReadModel,
    private readonly removal: AttachmentRemoval,
  ) {}

  async execute({ instanceId, userId, audit }: DeleteUserFilesCommand): Promise<number> {
    const files = await this.attachments.filesOf(instanceId, userId);
    await this.removal.remove(instanceId, files, audit);
    return files.length;
  }
}

@Controller(FILES_ROUTE)
export class DeleteUserFilesController {
  constructor(private readonly commands: CommandBus) {}

  /** Seed: 200 with no body. */
  @Delete('users/:userId')
  @Requires(Access.permission('file:create', { self: 'userId' }))
  @HttpCode(200)
  async delete(
    @Param('instanceId') instanceId: string,
    @Param('userId') userId: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new DeleteUserFilesCommand(instanceId, userId, auditActor(actor)));
  }
}

import { Controller, Delete, HttpCode, Param } from '@nestjs/common';
import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { forbidden } from '../../../../shared/domain/errors';
import { Actor } from '../../../../shared/domain/event';
import { auditActor, CurrentActor } from '../../../instances/authentication/access-token.guard';
import { RequestActor } from '../../../instances/authentication/access-token';
import { RoomAccess } from '../../../rooms/room-access';
import { AttachmentRemoval } from '../../attachment-removal';
import { AttachmentsReadModel } from '../../attachments.read-model';
import { assertFileName, FILES_ROUTE, fileNotFound } from '../files-route';
import { Access } from '../../../roles/access-rules';
import { Requires } from '../../../roles/requires.decorator';

export class DeleteFileCommand {
  constructor(
    readonly instanceId: string,
    readonly roomId: string,
    readonly fileName: string,
    readonly actor: RequestActor,
    readonly audit: Actor,
  ) {}
}

/** Deletes a file (every upload stored under its name in the room): its uploader or su may. */
@CommandHandler(DeleteFileCommand)
export class DeleteFileHandler implements ICommandHandler<DeleteFileCommand, void> {
  constructor(
    private readonly access: RoomAccess,
    private readonly attachments: AttachmentsReadModel,
    private readonly removal: AttachmentRemoval,
  ) {}

  async execute({ instanceId, roomId, fileName, actor, audit }: DeleteFileCommand): Promise<void> {
    assertFileName(fileName);
    await this.access.readable(instanceId, roomId, actor);
    const uploads = await this.attachments.filesNamed(instanceId, roomId, fileName);
    if (uploads.length === 0) throw fileNotFound(fileName);
    if (!actor.su && uploads[0].user_id !== actor.userId) {
      throw forbidden('not_file_owner', 'Only the user who uploaded a file (or su) may delete it');
    }
    await this.removal.remove(instanceId, uploads, audit);
  }
}

@Controller(FILES_ROUTE)
export class DeleteFileController {
  constructor(private readonly commands: CommandBus) {}

  @Delete('rooms/:roomId/files/:fileName')
  @Requires(Access.permission('file:create', { room: 'roomId' }))
  @HttpCode(204)
  async delete(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('fileName') fileName: string,
    @CurrentActor() actor: RequestActor,
  ): Promise<void> {
    await this.commands.execute(new DeleteFileCommand(instanceId, roomId, fileName, actor, auditActor(actor)));
  }
}

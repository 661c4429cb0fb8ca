import { Module } from '@nestjs/common';
import { CLOCK } from '../../shared/application/tokens';
import { SECRET_BOX, SecretBox } from '../../shared/crypto/secret-box';
import { Clock } from '../../shared/domain/clock';
import { InstancesModule } from '../instances/instances.module';
import { ATTACHMENT_RESOLVER } from '../messages/presentation/attachments.port';
import { DROPPED_ATTACHMENTS } from '../messages/dropped-attachments.port';
import { RoomsModule } from '../rooms/rooms.module';
import { RolesModule } from '../roles/roles.module';
import { AttachmentRemoval } from './attachment-removal';
import { UploadedAttachments } from './attachment-resolver';
import { BlobJanitor } from './blob-janitor';
import { OrphanBlobSweep } from './orphan-blob-sweep';
import { AttachmentsReadModel } from './attachments.read-model';
import { CreateAttachmentController, CreateAttachmentHandler } from './create-attachment/create-attachment';
import { DownloadAttachmentHandler } from './download-attachment/download-attachment';
import { DeleteFileController, DeleteFileHandler } from './files-api/delete-file/delete-file';
import { DeleteUserFilesController, DeleteUserFilesHandler } from './files-api/delete-user-files/delete-user-files';
import { GetFileController, GetFileHandler } from './files-api/get-file/get-file';
import { UploadFileHandler } from './files-api/upload-file/upload-file';
import { GetAttachmentController, GetAttachmentHandler } from './get-attachment/get-attachment';
import { AttachmentLinks } from './links/attachment-links';
import { PublicOrigin } from './links/public-origin';
import { TransferRoutes } from './transfer-routes';
import { UploadAttachmentHandler } from './upload-attachment/upload-attachment';

/**
 * Attachments: the v6 upload flow (announce, PUT to a signed URL, signed downloads), the
 * files API (chatkit_files v1) for v2 data attachments, and the AttachmentResolver messages
 * use to store attachment parts and render their links.
 */
@Module({
  imports: [InstancesModule, RoomsModule, RolesModule],
  controllers: [
    CreateAttachmentController,
    GetAttachmentController,
    GetFileController,
    DeleteFileController,
    DeleteUserFilesController,
  ],
  providers: [
    { provide: AttachmentLinks, inject: [SECRET_BOX, CLOCK], useFactory: (secretBox: SecretBox, clock: Clock) => new AttachmentLinks(secretBox, clock) },
    PublicOrigin,
    AttachmentsReadModel,
    AttachmentRemoval,
    BlobJanitor,
    OrphanBlobSweep,
    TransferRoutes,
    CreateAttachmentHandler,
    GetAttachmentHandler,
    UploadAttachmentHandler,
    DownloadAttachmentHandler,
    UploadFileHandler,
    GetFileHandler,
    DeleteFileHandler,
    DeleteUserFilesHandler,
    { provide: ATTACHMENT_RESOLVER, useClass: UploadedAttachments },
    { provide: DROPPED_ATTACHMENTS, useExisting: BlobJanitor },
  ],
  exports: [ATTACHMENT_RESOLVER, DROPPED_ATTACHMENTS, BlobJanitor],
})
export class AttachmentsModule {}

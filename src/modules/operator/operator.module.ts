import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { CreateInstanceController } from './create-instance/create-instance';
import { CreateKeyController } from './create-key/create-key';
import { DeploymentHealthController } from './deployment-health/deployment-health';
import { DisableKeyController } from './disable-key/disable-key';
import { DownloadExportController } from './download-export/download-export';
import { ExportLinks } from './download-export/export-links';
import { ExportInstanceController } from './export-instance/export-instance';
import { GetImportController } from './import-instance/get-import';
import { ImportJobs } from './import-instance/import-jobs';
import { ImportRoutes } from './import-instance/import-routes';
import { ListInstancesController } from './list-instances/list-instances';
import { TransferSpool } from './transfer-spool';
import { UpdateInstanceController } from './update-instance/update-instance';

/**
 * The deployment API (`/services/parley_operator/v1`, docs/console.md): instances and their
 * keys, health in detail, export and import, for the deployment credential only. Imported only while
 * CONSOLE_ENABLED=true, so otherwise its routes do not exist (404 as any unknown route).
 */
@Module({
  imports: [InstancesModule],
  controllers: [
    ListInstancesController,
    CreateInstanceController,
    UpdateInstanceController,
    CreateKeyController,
    DisableKeyController,
    DeploymentHealthController,
    ExportInstanceController,
    DownloadExportController,
    GetImportController,
  ],
  providers: [TransferSpool, ExportLinks, ImportJobs, ImportRoutes],
})
export class OperatorModule {}

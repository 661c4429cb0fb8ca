import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { DeleteJobs } from './delete-jobs';
import { GetJobStatusController } from './get-job-status/get-job-status';
import { ScheduleDeleteController } from './schedule-delete/schedule-delete';

/** Asynchronous deletes of rooms and users (chatkit_scheduler v1). */
@Module({
  imports: [InstancesModule],
  controllers: [ScheduleDeleteController, GetJobStatusController],
  providers: [DeleteJobs],
})
export class SchedulerModule {}

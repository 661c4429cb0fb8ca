import { Controller, Get, Param } from '@nestjs/common';
import { DeleteJobs } from '../delete-jobs';
import { SCHEDULER_ROUTE } from '../scheduler-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** `getDeleteStatus`: `{status}` (`pending`, `completed`, or `failed` with its `reason`), read from the job's stream. */
@Controller(SCHEDULER_ROUTE)
export class GetJobStatusController {
  constructor(private readonly jobs: DeleteJobs) {}

  @Get('status/:jobId')
  @Requires(Access.su)
  async status(@Param('instanceId') instanceId: string, @Param('jobId') jobId: string) {
    const job = await this.jobs.status(instanceId, jobId);
    return {
      id: jobId,
      status: job.status,
      ...(job.reason !== null && { reason: job.reason }),
      target: job.target,
      target_id: job.targetId,
    };
  }
}

import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { DeleteJobs } from '../delete-jobs';
import { SCHEDULER_ROUTE } from '../scheduler-route';

/** `getDeleteStatus`: `{status}` (`pending`, `completed`, or `failed` with its `reason`), read from the job's stream. */
@Controller(SCHEDULER_ROUTE)
@UseGuards(AccessTokenGuard)
export class GetJobStatusController {
  constructor(private readonly jobs: DeleteJobs) {}

  @Get('status/:jobId')
  async status(@Param('instanceId') instanceId: string, @Param('jobId') jobId: string, @CurrentActor() actor: RequestActor) {
    requireSu(actor);
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

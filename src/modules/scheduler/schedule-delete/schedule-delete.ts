import { Controller, HttpCode, Param, Put, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, auditActor, CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { DeleteJobs } from '../delete-jobs';
import { SCHEDULER_ROUTE } from '../scheduler-route';

/** `asyncDeleteRoom` / `asyncDeleteUser`: answers `{id}` of the job as soon as it is in the log. */
@Controller(SCHEDULER_ROUTE)
@UseGuards(AccessTokenGuard)
export class ScheduleDeleteController {
  constructor(private readonly jobs: DeleteJobs) {}

  @Put('rooms/:roomId')
  @HttpCode(200)
  async room(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @CurrentActor() actor: RequestActor) {
    requireSu(actor);
    return { id: await this.jobs.schedule(instanceId, 'room', roomId, auditActor(actor)) };
  }

  @Put('users/:userId')
  @HttpCode(200)
  async user(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @CurrentActor() actor: RequestActor) {
    requireSu(actor);
    return { id: await this.jobs.schedule(instanceId, 'user', userId, auditActor(actor)) };
  }
}

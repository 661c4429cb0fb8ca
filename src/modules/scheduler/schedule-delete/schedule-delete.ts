import { Controller, HttpCode, Param, Put } from '@nestjs/common';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { DeleteJobs } from '../delete-jobs';
import { SCHEDULER_ROUTE } from '../scheduler-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** `asyncDeleteRoom` / `asyncDeleteUser`: answers `{id}` of the job as soon as it is in the log. */
@Controller(SCHEDULER_ROUTE)
export class ScheduleDeleteController {
  constructor(private readonly jobs: DeleteJobs) {}

  @Put('rooms/:roomId')
  @Requires(Access.su)
  @HttpCode(200)
  async room(@Param('instanceId') instanceId: string, @Param('roomId') roomId: string, @CurrentActor() actor: RequestActor) {
    return { id: await this.jobs.schedule(instanceId, 'room', roomId, auditActor(actor)) };
  }

  @Put('users/:userId')
  @Requires(Access.su)
  @HttpCode(200)
  async user(@Param('instanceId') instanceId: string, @Param('userId') userId: string, @CurrentActor() actor: RequestActor) {
    return { id: await this.jobs.schedule(instanceId, 'user', userId, auditActor(actor)) };
  }
}

import { Controller, Get, Param } from '@nestjs/common';
import { CHATKIT_V6_ROUTE } from '../../../shared/http/chatkit-route';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { MutesReadModel } from '../mutes.read-model';

export interface MuteView {
  readonly user_id: string;
  readonly muted_at: string;
}

/** `GET …/users/:userId/mutes`: who the user muted, newest first (the user themselves, or su). */
@Controller(CHATKIT_V6_ROUTE)
export class ListMutesController {
  constructor(private readonly mutes: MutesReadModel) {}

  @Get('users/:userId/mutes')
  @Requires(Access.selfOrSu('userId'))
  async list(@Param('instanceId') instanceId: string, @Param('userId') userId: string): Promise<{ mutes: MuteView[] }> {
    const docs = await this.mutes.of(instanceId, userId);
    return { mutes: docs.map((d) => ({ user_id: d.muted_user_id, muted_at: d.muted_at })) };
  }
}

import { Controller, Get, Param } from '@nestjs/common';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { ErasureState } from '../domain/erasure.decider';
import { Erasures } from '../erasures';
import { PARLEY_ADMIN_ROUTE } from '../erasures-route';

/** What the status route answers: where the erasure stands, and what it erased so far (all of it once `completed`). */
export const presentErasure = (id: string, erasure: ErasureState) => ({
  id,
  status: erasure.status,
  user_id: erasure.userId,
  requested_at: erasure.requestedAt,
  step: erasure.step,
  erased: erasure.counts,
  ...(erasure.completedAt !== null && { completed_at: erasure.completedAt }),
});

/** `GET /erasures/:id`: read from the erasure's stream. */
@Controller(PARLEY_ADMIN_ROUTE)
export class GetErasureController {
  constructor(private readonly erasures: Erasures) {}

  @Get('erasures/:erasureId')
  @Requires(Access.su)
  async status(@Param('instanceId') instanceId: string, @Param('erasureId') erasureId: string) {
    return presentErasure(erasureId, await this.erasures.status(instanceId, erasureId));
  }
}

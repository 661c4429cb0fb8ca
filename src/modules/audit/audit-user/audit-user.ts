import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { AUDIT_ROUTE } from '../audit-route';
import { AuditTrail, parseAuditPage } from '../audit-trail';

/** A user's history: its stream, the roles granted to and taken from it, its Beams deletions. Paged by `from` and `limit`; su only. */
@Controller(AUDIT_ROUTE)
@UseGuards(AccessTokenGuard)
export class AuditUserController {
  constructor(private readonly trail: AuditTrail) {}

  @Get('users/:id')
  audit(
    @Param('instanceId') instanceId: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ) {
    requireSu(actor);
    return this.trail.page({ kind: 'user', instanceId, id }, parseAuditPage(query));
  }
}

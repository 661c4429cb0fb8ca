import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { AUDIT_ROUTE } from '../audit-route';
import { AuditTrail, parseAuditPage } from '../audit-trail';

/** Everything one actor did: `:id` is a user id, `key:<key_id>` for an instance key (or `cli`/`bootstrap`), or `user:<user_id>` when a user id itself starts with `key:` (read through the audit index). Paged by `from` and `limit`; su only. */
@Controller(AUDIT_ROUTE)
@UseGuards(AccessTokenGuard)
export class AuditActorController {
  constructor(private readonly trail: AuditTrail) {}

  @Get('actors/:id')
  audit(
    @Param('instanceId') instanceId: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ) {
    requireSu(actor);
    return this.trail.page({ kind: 'actor', instanceId, id }, parseAuditPage(query));
  }
}

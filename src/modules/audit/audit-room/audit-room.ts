import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { AccessTokenGuard, CurrentActor, requireSu } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { AUDIT_ROUTE } from '../audit-route';
import { AuditTrail, parseAuditPage } from '../audit-trail';

/** A room's history: its stream, its timeline (sends), its messages' edits and deletes, its attachments and the role grants scoped to it. Paged by `from` and `limit`; su only. */
@Controller(AUDIT_ROUTE)
@UseGuards(AccessTokenGuard)
export class AuditRoomController {
  constructor(private readonly trail: AuditTrail) {}

  @Get('rooms/:id')
  audit(
    @Param('instanceId') instanceId: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ) {
    requireSu(actor);
    return this.trail.page({ kind: 'room', instanceId, id }, parseAuditPage(query));
  }
}

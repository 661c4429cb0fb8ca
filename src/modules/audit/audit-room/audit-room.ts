import { Controller, Get, Param, Query } from '@nestjs/common';
import { AUDIT_ROUTE } from '../audit-route';
import { AuditTrail, parseAuditPage } from '../audit-trail';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** A room's history: its stream, its timeline (sends), its messages' edits and deletes, its attachments and the role grants scoped to it. Paged by `from` and `limit`; su only. */
@Controller(AUDIT_ROUTE)
export class AuditRoomController {
  constructor(private readonly trail: AuditTrail) {}

  @Get('rooms/:id')
  @Requires(Access.su)
  audit(
    @Param('instanceId') instanceId: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.trail.page({ kind: 'room', instanceId, id }, parseAuditPage(query));
  }
}

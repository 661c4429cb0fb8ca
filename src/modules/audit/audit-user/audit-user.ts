import { Controller, Get, Param, Query } from '@nestjs/common';
import { AUDIT_ROUTE } from '../audit-route';
import { AuditTrail, parseAuditPage } from '../audit-trail';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** A user's history: its stream, the roles granted to and taken from it, its Beams deletions. Paged by `from` and `limit`; su only. */
@Controller(AUDIT_ROUTE)
export class AuditUserController {
  constructor(private readonly trail: AuditTrail) {}

  @Get('users/:id')
  @Requires(Access.su)
  audit(
    @Param('instanceId') instanceId: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.trail.page({ kind: 'user', instanceId, id }, parseAuditPage(query));
  }
}

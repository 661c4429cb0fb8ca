import { Controller, Get, Param, Query } from '@nestjs/common';
import { AUDIT_ROUTE } from '../audit-route';
import { AuditTrail, parseAuditPage } from '../audit-trail';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** Everything one actor did: `:id` is a user id, `key:<key_id>` for an instance key (or `cli`/`bootstrap`), or `user:<user_id>` when a user id itself starts with `key:` (read through the audit index). Paged by `from` and `limit`; su only. */
@Controller(AUDIT_ROUTE)
export class AuditActorController {
  constructor(private readonly trail: AuditTrail) {}

  @Get('actors/:id')
  @Requires(Access.su)
  audit(
    @Param('instanceId') instanceId: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.trail.page({ kind: 'actor', instanceId, id }, parseAuditPage(query));
  }
}

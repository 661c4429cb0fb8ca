import { Controller, Get, Param, Query } from '@nestjs/common';
import { unprocessable } from '../../../shared/domain/errors';
import { AUDIT_ROUTE } from '../audit-route';
import { AuditTrail, parseAuditPage } from '../audit-trail';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

const ROOM_ID_MAX = 1024;

/**
 * A message's history: its send, its edits and deletion, and the console's recorded reads of its
 * content (see MessageHistory). `room_id` is needed only for a message of a deleted room that was
 * never edited (no read model holds its room then). Paged by `from` and `limit`; su only.
 */
@Controller(AUDIT_ROUTE)
export class AuditMessageController {
  constructor(private readonly trail: AuditTrail) {}

  @Get('messages/:messageId')
  @Requires(Access.su)
  audit(@Param('instanceId') instanceId: string, @Param('messageId') rawId: string, @Query() query: Record<string, unknown>) {
    const messageId = /^[0-9]{1,15}$/.test(rawId) ? Number(rawId) : NaN;
    if (!Number.isSafeInteger(messageId)) throw unprocessable('invalid_message_id', 'A message id is a whole number');
    const roomId = query.room_id;
    if (roomId !== undefined && (typeof roomId !== 'string' || roomId === '' || roomId.length > ROOM_ID_MAX)) {
      throw unprocessable('invalid_room_id', 'room_id must be a room id, given once');
    }
    return this.trail.messagePage(instanceId, messageId, { ...parseAuditPage(query), ...(roomId !== undefined && { roomId }) });
  }
}

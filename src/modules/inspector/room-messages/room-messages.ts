import { Controller, Get, Param, Query } from '@nestjs/common';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { CONSOLE_VIEWER, ConsoleMessagePage, parseConsolePageQuery } from '../console-message-page';

/**
 * `GET rooms/:roomId/messages?limit=&before=&after=&content=`: a page of a room's messages for
 * the console, newest first (`before`: older than that id), or oldest first after an id
 * (`after`: what a live tail polls). Metadata only unless `content=true`, and that read is
 * recorded in the log first (`ConsoleMessagePage`). A thread's first message carries its
 * thread's summary; its replies page under `…/messages/:messageId/replies`. Messages sent under
 * a shadow ban are listed, marked (`CONSOLE_VIEWER`). Messages deleted
 * through v6 (no tombstone) are not listed; their history is in the audit API.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class RoomMessagesController {
  constructor(
    private readonly rooms: RoomsReadModel,
    private readonly messages: MessagesReadModel,
    private readonly pages: ConsoleMessagePage,
  ) {}

  @Get('rooms/:roomId/messages')
  @Requires(Access.su)
  async list(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ) {
    const page = parseConsolePageQuery(query);
    await this.rooms.get(instanceId, roomId);
    const docs = await this.messages.page(instanceId, roomId, { initialId: page.initialId, direction: page.direction, limit: page.limit + 1, viewer: CONSOLE_VIEWER });
    return this.pages.answer(instanceId, roomId, docs, page, actor);
  }
}

import { Controller, Get, Param, Query } from '@nestjs/common';
import { PARLEY_ADMIN_ROUTE } from '../../erasures/erasures-route';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { parseMessageId } from '../../messages/presentation/message-id.pipe';
import { RoomsReadModel } from '../../rooms/rooms.read-model';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { parentIsReply, parentNotFound } from '../../threads/thread-errors';
import { messageOrReply, ThreadsReadModel } from '../../threads/threads.read-model';
import { CONSOLE_VIEWER, ConsoleMessagePage, parseConsolePageQuery } from '../console-message-page';

/**
 * `GET rooms/:roomId/messages/:messageId/replies?limit=&before=&after=&content=`: a page of a
 * thread's replies for the console, paged and shown as the room's messages are (metadata
 * unless `content=true`, and that read recorded first, naming the thread). The v6 route
 * answers the same replies with their content always: reading them here keeps the console's
 * rule that every content read is in the log. Replies sent under a shadow ban are listed,
 * marked (`CONSOLE_VIEWER`), as is a first message sent under one. A thread outlives its first
 * message's deletion, so it pages while either exists (404 `parent_not_found` when neither
 * does); a reply has no thread of its own (422 `parent_is_reply`, as on v6).
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class ThreadRepliesController {
  constructor(
    private readonly rooms: RoomsReadModel,
    private readonly messages: MessagesReadModel,
    private readonly threads: ThreadsReadModel,
    private readonly pages: ConsoleMessagePage,
  ) {}

  @Get('rooms/:roomId/messages/:messageId/replies')
  @Requires(Access.su)
  async list(
    @Param('instanceId') instanceId: string,
    @Param('roomId') roomId: string,
    @Param('messageId') rawId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ) {
    const parentId = parseMessageId(rawId);
    const page = parseConsolePageQuery(query);
    await this.rooms.get(instanceId, roomId);
    const [thread, parent] = await Promise.all([
      this.threads.thread(instanceId, roomId, parentId),
      messageOrReply(this.messages, this.threads, instanceId, roomId, parentId, CONSOLE_VIEWER),
    ]);
    if (!thread && !parent) throw parentNotFound(parentId, roomId);
    if (parent?.parent_id !== undefined) throw parentIsReply(parentId, parent.parent_id);
    // Read even where no thread shows to everyone: replies sent under a shadow ban are in none.
    const docs = await this.threads.replies(instanceId, roomId, parentId, { initialId: page.initialId, direction: page.direction, limit: page.limit + 1, viewer: CONSOLE_VIEWER });
    return this.pages.answer(instanceId, roomId, docs, page, actor, parentId);
  }
}

import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { RoomsModule } from '../rooms/rooms.module';
import { ListRepliesController, ListRepliesHandler } from './list-replies/list-replies';
import { ListUserThreadsController, ListUserThreadsHandler } from './list-user-threads/list-user-threads';
import { ReplyToMessageController, ReplyToMessageHandler } from './reply-to-message/reply-to-message';
import { SetThreadCursorHandler, ThreadCursorController } from './thread-cursor/thread-cursor';

/** Threads (v6): replies to a message, their pages, a user's threads and read cursors per thread. */
@Module({
  imports: [MessagesModule, RoomsModule],
  controllers: [ReplyToMessageController, ListRepliesController, ThreadCursorController, ListUserThreadsController],
  providers: [ReplyToMessageHandler, ListRepliesHandler, SetThreadCursorHandler, ListUserThreadsHandler],
})
export class ThreadsModule {}

import { Module } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { AttachmentsModule } from '../attachments/attachments.module';
import { InstancesModule } from '../instances/instances.module';
import { RoomsModule } from '../rooms/rooms.module';
import { DeleteMessageController, DeleteMessageHandler } from './delete-message/delete-message';
import { EditMessageController, EditMessageHandler } from './edit-message/edit-message';
import { FetchMessagesController, FetchMessagesHandler } from './fetch-messages/fetch-messages';
import { GetMessageController, GetMessageHandler } from './get-message/get-message';
import { MessageChanges } from './message-changes';
import { MessageContent } from './message-content';
import { MessageChangeRouting } from './message-change-routing';
import { MessageIds } from './message-ids';
import { MessagesReadModel } from './messages.read-model';
import { SendMessageController, SendMessageHandler } from './send-message/send-message';
import { SentMessages } from './sent-messages';
import { RoomSubscription } from './subscribe-to-room/subscribe-to-room';
import { ReactToMessageController, ReactToMessageHandler } from './react-to-message/react-to-message';
import { ListReactionsController, ListReactionsHandler } from './list-reactions/list-reactions';
import { ReactionsReadModel } from './reactions.read-model';
import { ThreadsReadModel } from '../threads/threads.read-model';

/** Room timelines: send, fetch, get, edit and delete messages in v2 and v6 shapes; reactions to them (v6). */
@Module({
  imports: [InstancesModule, RoomsModule, AttachmentsModule],
  controllers: [
    SendMessageController,
    FetchMessagesController,
    GetMessageController,
    EditMessageController,
    DeleteMessageController,
    ReactToMessageController,
    ListReactionsController,
  ],
  providers: [
    MessageIds,
    { provide: SentMessages, inject: [CommandPipeline], useFactory: (pipeline: CommandPipeline) => new SentMessages(pipeline) },
    MessageChanges,
    MessageChangeRouting,
    MessagesReadModel,
    MessageContent,
    SendMessageHandler,
    FetchMessagesHandler,
    GetMessageHandler,
    EditMessageHandler,
    DeleteMessageHandler,
    ReactToMessageHandler,
    ListReactionsHandler,
    ReactionsReadModel,
    // Read by the threads module too: parents' summaries are part of v6 messages.
    ThreadsReadModel,
    RoomSubscription,
  ],
  exports: [MessagesReadModel, SentMessages, MessageContent, ReactionsReadModel, ThreadsReadModel, AttachmentsModule],
})
export class MessagesModule {}

import { Module } from '@nestjs/common';
import { FeedsModule } from '../feeds/feeds.module';
import { MessagesModule } from '../messages/messages.module';
import { RoomsModule } from '../rooms/rooms.module';
import { BeamsInterestsController } from './beams-interests/beams-interests';
import { BeamsPublishReportController } from './beams-publish-report/beams-publish-report';
import { BeamsUserDevicesController } from './beams-user-devices/beams-user-devices';
import { FeedsByPrefixController } from './feeds-by-prefix/feeds-by-prefix';
import { ReadCursorsController } from './read-cursors/read-cursors';
import { RoomMembersController } from './room-members/room-members';
import { RoomMessagesController } from './room-messages/room-messages';
import { RoomSummaryController } from './room-summary/room-summary';
import { SearchRoomsController } from './search-rooms/search-rooms';
import { SearchUsersController } from './search-users/search-users';
import { ThreadRepliesController } from './thread-replies/thread-replies';
import { ConsoleMessagePage } from './console-message-page';
import { UserAndRoomSearch } from './user-and-room-search';
import { UserRoomsController } from './user-rooms/user-rooms';

/**
 * The instance inspector (`parley_admin`, su tokens of the instance): what the console reads
 * that the Chatkit, Beams and Feeds APIs do not answer: users and rooms searched by prefix, a
 * room without its member ids; a page at a time, a room's members, a user's rooms, the read
 * cursors of a room or a user and Feeds by prefix; a room's messages and a thread's replies as metadata (content on
 * request, and that read recorded); Beams devices per user and interest counts, a Beams publish's delivery report. Every read goes
 * through an index of a read model.
 */
@Module({
  imports: [RoomsModule, MessagesModule, FeedsModule],
  controllers: [SearchUsersController, SearchRoomsController, RoomSummaryController, RoomMembersController, RoomMessagesController, ThreadRepliesController, ReadCursorsController, UserRoomsController, BeamsUserDevicesController, BeamsInterestsController, BeamsPublishReportController, FeedsByPrefixController],
  providers: [UserAndRoomSearch, ConsoleMessagePage],
})
export class InspectorModule {}

import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { RoomsModule } from '../rooms/rooms.module';
import { BeamsInterestsController } from './beams-interests/beams-interests';
import { BeamsPublishReportController } from './beams-publish-report/beams-publish-report';
import { BeamsUserDevicesController } from './beams-user-devices/beams-user-devices';
import { RoomMessagesController } from './room-messages/room-messages';
import { SearchRoomsController } from './search-rooms/search-rooms';
import { SearchUsersController } from './search-users/search-users';
import { UserAndRoomSearch } from './user-and-room-search';

/**
 * The instance inspector (`parley_admin`, su tokens of the instance): what the console reads
 * that the Chatkit and Beams APIs do not answer: users and rooms searched by prefix, a room's
 * messages as metadata (content on request, and that read recorded), Beams devices per user
 * and interest counts, a Beams publish's delivery report. Every read goes through an index of a read model.
 */
@Module({
  imports: [RoomsModule, MessagesModule],
  controllers: [SearchUsersController, SearchRoomsController, RoomMessagesController, BeamsUserDevicesController, BeamsInterestsController, BeamsPublishReportController],
  providers: [UserAndRoomSearch],
})
export class InspectorModule {}

import { Module } from '@nestjs/common';
import { CursorsModule } from '../cursors/cursors.module';
import { MutesModule } from '../mutes/mutes.module';
import { RoomsModule } from '../rooms/rooms.module';
import { UsersModule } from '../users/users.module';
import { UserEventsSubscription } from './subscribe-to-user-events/subscribe-to-user-events';

/** The per-user event stream chatkit-client connects with: it draws on users, rooms and cursors. */
@Module({
  imports: [UsersModule, RoomsModule, CursorsModule, MutesModule],
  providers: [UserEventsSubscription],
})
export class UserEventsModule {}

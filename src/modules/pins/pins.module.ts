import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { RoomsModule } from '../rooms/rooms.module';
import { ListPinsController, ListPinsHandler } from './list-pins/list-pins';
import { PinMessageController, PinMessageHandler } from './pin-message/pin-message';
import { PinsReadModel } from './pins.read-model';

/** A room's pinned messages (v6): pin, unpin, list. */
@Module({
  imports: [MessagesModule, RoomsModule],
  controllers: [PinMessageController, ListPinsController],
  providers: [PinMessageHandler, ListPinsHandler, PinsReadModel],
})
export class PinsModule {}

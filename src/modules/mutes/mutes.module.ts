import { Module } from '@nestjs/common';
import { ListMutesController } from './list-mutes/list-mutes';
import { MuteUserController, MuteUserHandler } from './mute-user/mute-user';
import { MutesReadModel } from './mutes.read-model';

/** Muting a user for oneself (v6): mute, unmute, list. The server filters nothing for the muter (docs/api.md says why). */
@Module({
  controllers: [MuteUserController, ListMutesController],
  providers: [MuteUserHandler, MutesReadModel],
  exports: [MutesReadModel],
})
export class MutesModule {}

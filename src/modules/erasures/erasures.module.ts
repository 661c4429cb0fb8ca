import { Module } from '@nestjs/common';
import { BeamsModule } from '../beams/beams.module';
import { InstancesModule } from '../instances/instances.module';
import { MessagesModule } from '../messages/messages.module';
import { UserErasure } from './erase-user/user-erasure';
import { ErasureWorker } from './erasure-worker';
import { Erasures } from './erasures';
import { GetErasureController } from './get-erasure/get-erasure';
import { RequestErasureController } from './request-erasure/request-erasure';

/** User erasure on request (`parley_admin`): the user, its messages as tombstones, uploads, cursors, Beams devices, keys. */
@Module({
  imports: [InstancesModule, MessagesModule, BeamsModule],
  controllers: [RequestErasureController, GetErasureController],
  providers: [Erasures, ErasureWorker, UserErasure],
  exports: [Erasures, ErasureWorker],
})
export class ErasuresModule {}

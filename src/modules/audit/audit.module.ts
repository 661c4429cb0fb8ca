import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { AuditActorController } from './audit-actor/audit-actor';
import { AuditRoomController } from './audit-room/audit-room';
import { AuditUserController } from './audit-user/audit-user';
import { AuditTrail } from './audit-trail';

/** The audit API: users', rooms' and actors' histories from the log, for su tokens. */
@Module({
  imports: [InstancesModule],
  controllers: [AuditUserController, AuditRoomController, AuditActorController],
  providers: [AuditTrail],
})
export class AuditModule {}

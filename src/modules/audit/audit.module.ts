import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module';
import { AuditActorController } from './audit-actor/audit-actor';
import { AuditMessageController } from './audit-message/audit-message';
import { AuditRoomController } from './audit-room/audit-room';
import { AuditUserController } from './audit-user/audit-user';
import { AuditTrail } from './audit-trail';

/** The audit API: users', rooms', messages' and actors' histories from the log, for su tokens. */
@Module({
  imports: [InstancesModule],
  controllers: [AuditUserController, AuditRoomController, AuditMessageController, AuditActorController],
  providers: [AuditTrail],
})
export class AuditModule {}

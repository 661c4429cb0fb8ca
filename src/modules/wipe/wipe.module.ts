import { Inject, Module, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { INSTANCE_EPOCHS, InstanceEpochs } from '../../shared/application/write-path/instance-epochs';
import { INSTANCE_WIPED } from '../../shared/domain/instance-wipe';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { InstancesModule } from '../instances/instances.module';
import { RolesModule } from '../roles/roles.module';
import { WipeInstanceController } from './wipe-instance/wipe-instance';

/** Routing key the live log hands every wipe under. */
const WIPES = '$instance-wiped';

/** The instance wipe (`DELETE /resources`), and every process learning of wipes made by others. */
@Module({
  imports: [InstancesModule, RolesModule],
  controllers: [WipeInstanceController],
})
export class WipeModule implements OnModuleInit, OnModuleDestroy {
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly liveLog: LiveLog,
    @Inject(INSTANCE_EPOCHS) private readonly epochs: InstanceEpochs,
  ) {}

  onModuleInit(): void {
    this.liveLog.addRouter((event) => (event.type === INSTANCE_WIPED ? [WIPES] : []));
    this.stopListening = this.liveLog.on(WIPES, (event) => this.epochs.observe(event));
  }

  onModuleDestroy(): void {
    this.stopListening?.();
  }
}

import { DynamicModule, Module } from '@nestjs/common';
import { BeamsModule } from '../modules/beams/beams.module';
import { CursorsModule } from '../modules/cursors/cursors.module';
import { FeedsModule } from '../modules/feeds/feeds.module';
import { HealthModule } from '../modules/health/health.module';
import { InstancesModule } from '../modules/instances/instances.module';
import { MessagesModule } from '../modules/messages/messages.module';
import { PinsModule } from '../modules/pins/pins.module';
import { ReportsModule } from '../modules/reports/reports.module';
import { MutesModule } from '../modules/mutes/mutes.module';
import { ThreadsModule } from '../modules/threads/threads.module';
import { BansModule } from '../modules/bans/bans.module';
import { PresenceModule } from '../modules/presence/presence.module';
import { RolesModule } from '../modules/roles/roles.module';
import { SchedulerModule } from '../modules/scheduler/scheduler.module';
import { WipeModule } from '../modules/wipe/wipe.module';
import { RoomsModule } from '../modules/rooms/rooms.module';
import { UsersModule } from '../modules/users/users.module';
import { UserEventsModule } from '../modules/user-events/user-events.module';
import { StreamingModule } from '../modules/streaming/streaming.module';
import { MetricsModule } from '../modules/metrics/metrics.module';
import { ApiDocsModule } from '../modules/api-docs/api-docs.module';
import { AuditModule } from '../modules/audit/audit.module';
import { ErasuresModule } from '../modules/erasures/erasures.module';
import { InspectorModule } from '../modules/inspector/inspector.module';
import { SearchModule } from '../modules/search/search.module';
import { WebhooksModule } from '../modules/webhooks/webhooks.module';
import { IdempotencyModule } from '../modules/idempotency/idempotency.module';
import { guardWriteRoutes } from '../modules/idempotency/idempotent-write-routes';
import { SignUpDemoUserModule } from '../modules/users/sign-up-demo-user/sign-up-demo-user';
import { OperatorModule } from '../modules/operator/operator.module';
import { CoreModule } from './core.module';
import { demoServed } from './demo-page';
import { Runtime } from './runtime';

@Module({})
export class AppModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    const imports = [
      CoreModule.forRuntime(runtime),
      IdempotencyModule,
      HealthModule,
      StreamingModule,
      InstancesModule,
      UsersModule,
      RoomsModule,
      MessagesModule,
      PinsModule,
      ReportsModule,
      MutesModule,
      ThreadsModule,
      BansModule,
      CursorsModule,
      PresenceModule,
      UserEventsModule,
      RolesModule,
      SchedulerModule,
      WipeModule,
      BeamsModule,
      FeedsModule,
      MetricsModule,
      ApiDocsModule,
      AuditModule,
      ErasuresModule,
      InspectorModule,
      SearchModule,
      WebhooksModule,
      // The demo chat's sign-up exists only while its page is served (nothing otherwise).
      ...(demoServed(runtime.config) ? [SignUpDemoUserModule] : []),
    ];
    guardWriteRoutes(imports);
    // The deployment API exists only with the console on; its writes take no Idempotency-Key (docs/console.md).
    if (runtime.config.consoleEnabled) imports.push(OperatorModule);
    return { module: AppModule, imports };
  }
}

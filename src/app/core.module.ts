import { DynamicModule, Global, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { CONFIG } from '../config/config';
import { CommandPipeline } from '../shared/application/write-path/command-pipeline';
import { INSTANCE_EPOCHS, InstanceEpochs } from '../shared/application/write-path/instance-epochs';
import { READ_YOUR_WRITES } from '../shared/application/write-path/read-your-writes';
import { CLOCK, LEASE_OWNER, SERVES_REQUESTS, SOLE_API_PROCESS } from '../shared/application/tokens';
import { SECRET_BOX } from '../shared/crypto/secret-box';
import { systemClock } from '../shared/domain/clock';
import { EVENT_STORE, STORED_EVENT_LOG } from '../shared/ports/event-store.port';
import { SealingEventStore } from '../shared/application/operations/sealing-event-store';
import { READ_MODEL_STORE } from '../shared/ports/read-model-store.port';
import { EPHEMERAL_BUS } from '../shared/ports/ephemeral-bus.port';
import { BLOB_STORE } from '../shared/ports/blob-store.port';
import { RATE_COUNTERS } from '../shared/ports/rate-counter.port';
import { OutgoingWebhooks } from '../shared/webhooks/outgoing-webhooks';
import { WebhookTargets } from '../shared/webhooks/webhook-targets';
import { HEALTH_SOURCES } from '../modules/health/health-sources';
import { VersionedReadModels } from '../shared/application/projection-runtime/versioned-read-models';
import { Runtime } from './runtime';
import { healthSources } from './health-sources';

/** Binds the ports to the adapters this process opened, for every module. */
@Global()
@Module({})
export class CoreModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    const providers = [
      { provide: CONFIG, useValue: runtime.config },
      { provide: EVENT_STORE, useValue: runtime.stores.events },
      { provide: STORED_EVENT_LOG, useValue: runtime.stores.events instanceof SealingEventStore ? runtime.stores.events.stored : runtime.stores.events },
      // Queries read whichever version of each projection serves now.
      { provide: READ_MODEL_STORE, useValue: new VersionedReadModels(runtime.stores.readModels, runtime.versions) },
      { provide: EPHEMERAL_BUS, useValue: runtime.stores.ephemeral },
      { provide: BLOB_STORE, useValue: runtime.stores.blobs },
      { provide: RATE_COUNTERS, useValue: runtime.stores.rateCounters },
      { provide: SECRET_BOX, useValue: runtime.secretBox },
      { provide: READ_YOUR_WRITES, useValue: runtime.projections },
      { provide: CLOCK, useValue: systemClock },
      { provide: LEASE_OWNER, useValue: runtime.leaseOwner },
      // The CLIs open the runtime `in-process`; the servers `embedded` or `separate`.
      { provide: SERVES_REQUESTS, useValue: runtime.mode !== 'in-process' },
      { provide: SOLE_API_PROCESS, useValue: runtime.mode === 'embedded' },
      { provide: INSTANCE_EPOCHS, useValue: new InstanceEpochs(runtime.stores.events) },
      { provide: HEALTH_SOURCES, useValue: healthSources(runtime) },
      { provide: OutgoingWebhooks, useValue: new OutgoingWebhooks(new WebhookTargets(runtime.config.webhookAllowedHosts)) },
      CommandPipeline,
    ];
    return {
      module: CoreModule,
      imports: [CqrsModule.forRoot()],
      providers,
      exports: [...providers.map((p) => ('provide' in p ? p.provide : p)), CqrsModule],
    };
  }
}

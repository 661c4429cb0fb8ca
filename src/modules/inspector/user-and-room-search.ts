import { Inject, Injectable } from '@nestjs/common';
import { caughtUpWithLog } from '../../shared/application/write-path/caught-up-with-log';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import { NamedKind, namesProjection } from '../../../projections/search/names.projection';
import { searchByIdOrName } from './prefix-search';

/**
 * Users and rooms by id or name prefix (`searchByIdOrName`), names read once the names read
 * model has caught up with the log: a user created or renamed just before is found by its name.
 */
@Injectable()
export class UserAndRoomSearch {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
  ) {}

  search<D extends { readonly _id: string; readonly id: string }>(
    searched: { readonly collection: string; readonly kind: NamedKind },
    instanceId: string,
    request: { prefix: string; after: string | undefined; limit: number },
  ): Promise<{ found: D[]; next?: string }> {
    return searchByIdOrName<D>(this.readModels, searched, instanceId, request, () =>
      caughtUpWithLog(this.events, this.readYourWrites, [checkpointName(namesProjection)], { reason: 'names_lag', what: 'The names read model' }),
    );
  }
}

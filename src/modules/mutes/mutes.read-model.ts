import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import { MuteDocument, MUTES, mutesProjection } from '../../../projections/mutes/mutes.projection';
import { MAX_MUTES_PER_USER } from './domain/mutes.decider';

/** A mute change answers once the mutes read model shows it. */
export const MUTE_READS: readonly string[] = [checkpointName(mutesProjection)];

@Injectable()
export class MutesReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** Who the user muted, newest first (at most the cap: no paging). */
  of(instanceId: string, userId: string): Promise<MuteDocument[]> {
    return this.readModels.find<MuteDocument>(MUTES, {
      where: { instance_id: instanceId, user_id: userId },
      sort: [{ field: 'muted_at', descending: true }],
      limit: MAX_MUTES_PER_USER,
    });
  }
}

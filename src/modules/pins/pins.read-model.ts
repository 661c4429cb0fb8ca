import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import { PinDocument, PINS, pinsProjection } from '../../../projections/pins/pins.projection';
import { MAX_PINS_PER_ROOM } from './domain/pins.decider';

/** A pin change answers once the pins read model shows it. */
export const PIN_READS: readonly string[] = [checkpointName(pinsProjection)];

@Injectable()
export class PinsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** The room's pins that stand at `now`, newest pinned first (a room holds few: no paging). */
  async standing(instanceId: string, roomId: string, now: string): Promise<PinDocument[]> {
    const pins = await this.readModels.find<PinDocument>(PINS, {
      where: { instance_id: instanceId, room_id: roomId, shown_until: { gt: now } },
      limit: MAX_PINS_PER_ROOM,
    });
    return pins.sort((a, b) => (a.pinned_at < b.pinned_at ? 1 : a.pinned_at > b.pinned_at ? -1 : b.message_id - a.message_id));
  }
}

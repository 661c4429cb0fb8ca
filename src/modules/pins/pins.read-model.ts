import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import { PinDocument, PINS, pinsProjection, SHADOW_PINS, ShadowPinDocument } from '../../../projections/pins/pins.projection';
import { MAX_PINS_PER_ROOM } from './domain/pins.decider';

/** A pin change answers once the pins read model shows it. */
export const PIN_READS: readonly string[] = [checkpointName(pinsProjection)];

@Injectable()
export class PinsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /**
   * The room's pins that stand at `now`, newest pinned first (a room holds few: no paging). With
   * `viewer` (a shadow-banned caller), their own pins and unpins made under the ban over everyone's.
   */
  async standing(instanceId: string, roomId: string, now: string, viewer?: string): Promise<PinDocument[]> {
    const shown = await this.readModels.find<PinDocument>(PINS, {
      where: { instance_id: instanceId, room_id: roomId, shown_until: { gt: now } },
      limit: MAX_PINS_PER_ROOM,
    });
    let pins = shown;
    if (viewer !== undefined) {
      const own = await this.readModels.find<ShadowPinDocument>(SHADOW_PINS, { where: { instance_id: instanceId, room_id: roomId, user_id: viewer } });
      const changed = new Set(own.map((pin) => pin.message_id));
      const ownStanding = own
        .filter((pin) => pin.pinned && pin.shown_until > now)
        .map(({ user_id, pinned: _pinned, ...pin }): PinDocument => ({ ...pin, pinned_by: user_id }));
      pins = [...shown.filter((pin) => !changed.has(pin.message_id)), ...ownStanding];
    }
    return pins.sort((a, b) => (a.pinned_at < b.pinned_at ? 1 : a.pinned_at > b.pinned_at ? -1 : b.message_id - a.message_id));
  }
}

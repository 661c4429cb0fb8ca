import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { Actor, EventMetadata } from '../../../shared/domain/event';
import { checkpointName } from '../../../../projections/projection';
import { BEAMS_DEVICES, BeamsDeviceDocument, beamsDevicesProjection } from '../../../../projections/beams/beams-devices.projection';
import {
  BEAMS_PENDING_PUBLISHES,
  BeamsPendingPublishDocument,
  beamsPendingPublishesProjection,
} from '../../../../projections/beams/beams-pending-publishes.projection';
import { DomainError, unprocessable } from '../../../shared/domain/errors';
import { EVENT_STORE, EventStore } from '../../../shared/ports/event-store.port';
import { READ_MODEL_STORE, ReadModelStore } from '../../../shared/ports/read-model-store.port';
import { beamsUserDecider, beamsUserStream } from '../domain/beams.deciders';
import { BeamsUserDeletion } from '../beams-user-deletion.port';
import { isBeamsUserId, MAX_USER_ID_BYTES } from '../publish/publish-request';

const DEVICES = checkpointName(beamsDevicesProjection);
const PENDING_PUBLISHES = checkpointName(beamsPendingPublishesProjection);

/**
 * `deleteUser`: records that the user's devices are to be forgotten, naming them and the
 * publishes to the user not yet delivered, whose push addresses and notifications the delete
 * destroys in the log; answers once the device registry has forgotten them.
 */
@Injectable()
export class DeleteBeamsUser implements BeamsUserDeletion {
  constructor(
    private readonly pipeline: CommandPipeline,
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
  ) {}

  async delete(instanceId: string, userId: string, actor: Actor, now: Date): Promise<void> {
    await this.deleteRecording(instanceId, userId, { instance_id: instanceId, actor, occurred_at: now.toISOString() });
  }

  /** The same, recorded with the metadata of what asked for it (a user erasure names itself). */
  async deleteRecording(instanceId: string, userId: string, metadata: EventMetadata): Promise<void> {
    if (!isBeamsUserId(userId)) throw unprocessable('invalid_user_id', `The user id must be 1 to ${MAX_USER_ID_BYTES} bytes of UTF-8`);
    const { deviceIds, publishIds } = await this.heldFor(instanceId, userId);
    await this.pipeline.run(
      beamsUserStream(instanceId, userId),
      beamsUserDecider,
      { type: 'DeleteBeamsUser', userId, deviceIds, publishIds, now: metadata.occurred_at },
      metadata,
      { awaitProjections: [DEVICES, PENDING_PUBLISHES] },
    );
  }

  /**
   * The user's devices and undelivered publishes, as the read models show them once they have
   * folded everything already in the log (a publish accepted just before is among them).
   */
  private async heldFor(instanceId: string, userId: string): Promise<{ deviceIds: string[]; publishIds: string[] }> {
    const head = await this.events.headPosition();
    try {
      if (head !== null) await this.readYourWrites.waitFor(head, [DEVICES, PENDING_PUBLISHES]);
    } catch (error) {
      // Nothing is stored yet: the wait's own error would say the change was saved.
      if (error instanceof DomainError && error.reason === 'projection_lag') {
        throw new DomainError('unavailable', 'beams_registry_lag', 'The device registry is behind the log; nothing was deleted, retry shortly');
      }
      throw error;
    }
    const devices = await this.readModels.find<BeamsDeviceDocument>(BEAMS_DEVICES, { where: { instance_id: instanceId, user_id: userId } });
    // The work list holds only what is undelivered (a delivered publish's notification is destroyed already).
    const pending = await this.readModels.find<BeamsPendingPublishDocument>(BEAMS_PENDING_PUBLISHES, { where: { instance_id: instanceId } });
    return {
      deviceIds: devices.map((d) => d.device_id),
      publishIds: pending.filter((p) => p.target.kind === 'users' && p.target.users.includes(userId)).map((p) => p.publish_id),
    };
  }
}

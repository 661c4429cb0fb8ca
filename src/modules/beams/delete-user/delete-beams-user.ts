import { Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { Actor } from '../../../shared/domain/event';
import { checkpointName } from '../../../../projections/projection';
import { beamsDevicesProjection } from '../../../../projections/beams/beams-devices.projection';
import { unprocessable } from '../../../shared/domain/errors';
import { beamsUserDecider, beamsUserStream } from '../domain/beams.deciders';
import { isBeamsUserId, MAX_USER_ID_BYTES } from '../publish/publish-request';

/** `deleteUser`: records that the user's devices are to be forgotten; answers once the device registry has forgotten them. */
@Injectable()
export class DeleteBeamsUser {
  constructor(private readonly pipeline: CommandPipeline) {}

  async delete(instanceId: string, userId: string, actor: Actor, now: Date): Promise<void> {
    if (!isBeamsUserId(userId)) throw unprocessable('invalid_user_id', `The user id must be 1 to ${MAX_USER_ID_BYTES} bytes of UTF-8`);
    const at = now.toISOString();
    await this.pipeline.run(
      beamsUserStream(instanceId, userId),
      beamsUserDecider,
      { type: 'DeleteBeamsUser', userId, now: at },
      { instance_id: instanceId, actor, occurred_at: at },
      { awaitProjections: [checkpointName(beamsDevicesProjection)] },
    );
  }
}

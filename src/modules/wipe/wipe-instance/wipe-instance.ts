import { Controller, Delete, HttpCode, Inject, Param } from '@nestjs/common';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { INSTANCE_EPOCHS, InstanceEpochs } from '../../../shared/application/write-path/instance-epochs';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { CLOCK } from '../../../shared/application/tokens';
import { Clock } from '../../../shared/domain/clock';
import { DomainError } from '../../../shared/domain/errors';
import { instanceWipesStream } from '../../../shared/domain/instance-wipe';
import { CHATKIT_ROUTE } from '../../../shared/http/chatkit-route';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { RolePermissions } from '../../roles/role-permissions';
import { instanceWipeDecider } from '../domain/instance-wipe.decider';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

const savedNotReflected = (cause: unknown) =>
  Object.assign(
    new DomainError(
      'unavailable',
      'projection_lag',
      'The wipe was saved, but the read models did not reflect it in time; do not send it again, they will shortly',
    ),
    { cause },
  );

/**
 * `DELETE /resources` (su): wipes the instance's users, rooms, messages, cursors, files,
 * roles (the built-in ones too, as Chatkit's wipe did), role assignments and delete jobs. One
 * `InstanceWiped` event; from its position on, the write side reads the instance's entity
 * streams as after a wipe and the projections have dropped its documents. Keys and settings
 * stay, so the instance keeps working at once with the same keys.
 */
@Controller(CHATKIT_ROUTE)
export class WipeInstanceController {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly permissions: RolePermissions,
    @Inject(INSTANCE_EPOCHS) private readonly epochs: InstanceEpochs,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Delete('resources')
  @Requires(Access.su)
  @HttpCode(204)
  async wipe(@Param('instanceId') instanceId: string, @CurrentActor() actor: RequestActor): Promise<void> {
    const now = this.clock.now().toISOString();
    const { position } = await this.pipeline.run(
      instanceWipesStream(instanceId),
      instanceWipeDecider,
      { type: 'WipeInstance', now },
      { instance_id: instanceId, actor: auditActor(actor), occurred_at: now },
      { awaitProjections: [] },
    );
    // From here on, this process's writes and permission checks see the instance as wiped
    // (others' once their live log brings the event).
    this.epochs.record(instanceId, position);
    this.permissions.wiped(instanceId);
    try {
      await this.readYourWrites.waitFor(position!);
    } catch (error) {
      throw error instanceof DomainError && error.reason === 'projection_lag' ? error : savedNotReflected(error);
    }
  }
}

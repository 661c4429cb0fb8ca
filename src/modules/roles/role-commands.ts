import { Inject, Injectable } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { Actor } from '../../shared/domain/event';
import { RolesCommand, rolesDecider, rolesStream } from './domain/roles.decider';
import { UserRolesCommand, userRolesDecider, userRolesStream } from './domain/user-roles.decider';
import { RolePermissions } from './role-permissions';

/**
 * Writes to the role streams. Read models wait for nothing (the authorizer's reads and the
 * permission checks fold the streams themselves); each change takes effect in this process
 * before the answer, and in others when their live log brings it.
 */
@Injectable()
export class RoleCommands {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly permissions: RolePermissions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  now(): string {
    return this.clock.now().toISOString();
  }

  async catalogue(instanceId: string, command: RolesCommand, actor: Actor): Promise<boolean> {
    return this.run(rolesStream(instanceId), rolesDecider, instanceId, command, actor);
  }

  async userRoles(instanceId: string, userId: string, command: UserRolesCommand, actor: Actor): Promise<boolean> {
    return this.run(userRolesStream(instanceId, userId), userRolesDecider, instanceId, command, actor);
  }

  /** Whether anything was written. */
  private async run<C>(
    stream: string,
    decider: typeof rolesDecider | typeof userRolesDecider,
    instanceId: string,
    command: C,
    actor: Actor,
  ): Promise<boolean> {
    const outcome = await this.pipeline.run(
      stream,
      decider as never,
      command,
      { instance_id: instanceId, actor, occurred_at: this.now() },
      { awaitProjections: [] },
    );
    if (outcome.events.length > 0) this.permissions.changed(stream);
    return outcome.events.length > 0;
  }
}

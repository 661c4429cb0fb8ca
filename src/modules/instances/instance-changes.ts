import { Inject, Injectable } from '@nestjs/common';
import { CommandOutcome, CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { Actor } from '../../shared/domain/event';
import { KeyRing } from './authentication/key-ring';
import { InstanceCommand, instanceDecider, InstanceState, instanceStream } from './domain/instance.decider';
import { InstanceEvent } from './domain/instance.events';

type Unstamped<C> = C extends unknown ? Omit<C, 'now'> : never;

/**
 * Every change of an instance goes through here: decided on the instance's stream, stamped
 * with the time, and shown to this process's key ring at once (other processes see it
 * within the key ring's short cache time).
 */
@Injectable()
export class InstanceChanges {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly keyRing: KeyRing,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async apply(command: Unstamped<InstanceCommand>, actor: Actor): Promise<CommandOutcome<InstanceState, InstanceEvent>> {
    const now = this.clock.now().toISOString();
    const outcome = await this.pipeline.run(
      instanceStream(command.id),
      instanceDecider,
      { ...command, now } as InstanceCommand,
      { instance_id: command.id, actor, occurred_at: now },
    );
    this.keyRing.forget(command.id);
    return outcome;
  }
}

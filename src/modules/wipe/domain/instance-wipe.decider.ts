import { Decider } from '../../../shared/domain/decider';
import { DomainEvent } from '../../../shared/domain/event';
import { INSTANCE_WIPED } from '../../../shared/domain/instance-wipe';

export type InstanceWiped = DomainEvent<typeof INSTANCE_WIPED, { wiped_at: string }>;

export type WipeInstance = { type: 'WipeInstance'; now: string };

/** Every wipe is a new event: its position is the instance's new epoch. */
export const instanceWipeDecider: Decider<null, WipeInstance, InstanceWiped> = {
  initialState: () => null,
  evolve: (state) => state,
  decide: (command) => [{ type: INSTANCE_WIPED, data: { wiped_at: command.now } }],
};

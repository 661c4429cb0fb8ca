import { INSTANCE_WIPED } from '../../../shared/domain/instance-wipe';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { instanceWipeDecider, InstanceWiped } from './instance-wipe.decider';

const given = deciderSpecification(instanceWipeDecider);
const wipedAt = (wiped_at: string): InstanceWiped => ({ type: INSTANCE_WIPED, data: { wiped_at } });

describe('instance wipe decider', () => {
  it('records a wipe as an InstanceWiped event at the time asked', () => {
    expect(INSTANCE_WIPED).toBe('InstanceWiped');
    given().when({ type: 'WipeInstance', now: '2026-01-01T00:00:00.000Z' }).then([wipedAt('2026-01-01T00:00:00.000Z')]);
  });

  it('records every wipe again, however many came before: each one\'s position is a new epoch', () => {
    given(wipedAt('2026-01-01T00:00:00.000Z'), wipedAt('2026-01-02T00:00:00.000Z'))
      .when({ type: 'WipeInstance', now: '2026-01-03T00:00:00.000Z' })
      .then([wipedAt('2026-01-03T00:00:00.000Z')]);
    given(wipedAt('2026-01-01T00:00:00.000Z'))
      .when({ type: 'WipeInstance', now: '2026-01-01T00:00:00.000Z' })
      .then([wipedAt('2026-01-01T00:00:00.000Z')]);
  });
});

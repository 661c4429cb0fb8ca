import { dataKeyIds, ShredRule } from '../../../shared/domain/personal-data';
import { parseStreamName } from '../../../shared/domain/streams';
import { InstanceWiped } from './instance-wipe.decider';

/** The instance wipe destroys every key of the instance: its whole history becomes unreadable. */
export const instanceWipedShreds: ShredRule<InstanceWiped> = {
  type: 'InstanceWiped',
  destroys(_event, stream) {
    const parsed = parseStreamName(stream);
    return parsed ? [{ prefix: dataKeyIds.instance(parsed.instanceId) }] : [];
  },
};

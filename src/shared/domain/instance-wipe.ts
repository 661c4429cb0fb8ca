import { streamName } from './streams';

/**
 * The instance wipe (`DELETE /resources`): one `InstanceWiped` event on the instance's wipe
 * stream. The log keeps everything before it for the audit; the write side treats the
 * instance's entity streams as starting after it (src/shared/application/write-path/instance-epochs.ts)
 * and projections drop the instance's documents on it (projections/instance-wipe.ts).
 */
export const INSTANCE_WIPED = 'InstanceWiped';
export const instanceWipesStream = (instanceId: string) => streamName('wipes', instanceId, 'log');

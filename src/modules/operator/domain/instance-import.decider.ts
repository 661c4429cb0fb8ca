import { Decider } from '../../../shared/domain/decider';
import { streamName } from '../../../shared/domain/streams';
import { InstanceImported, InstanceImportEvent } from './instance-import.events';

/**
 * One stream per import, apart from the instance's own: a record there would diverge from the
 * source's instance stream and make the next import of a later export (a cut-over) a conflict.
 */
export const INSTANCE_IMPORT_CATEGORY = 'instanceimport';
export const instanceImportStream = (instanceId: string, importId: string) => streamName(INSTANCE_IMPORT_CATEGORY, instanceId, importId);

export interface RecordImport {
  readonly type: 'RecordImport';
  readonly outcome: InstanceImported['data'];
}

/** Records an import's outcome: a fact, not a decision, so the state is nothing. */
export const instanceImportDecider: Decider<null, RecordImport, InstanceImportEvent> = {
  initialState: () => null,
  evolve: () => null,
  foldsFrom: () => true,
  decide: ({ outcome }) => [{ type: 'InstanceImported', data: outcome }],
};

import { HealthSources } from '../modules/health/health-sources';
import { PROJECTOR_STATUS } from '../shared/application/projector-runner';
import { Runtime } from './runtime';
import { JSON_BODY_LIMIT_BYTES } from '../shared/http/body-parser';

/**
 * The largest append /health asks the event log to have room for: one request appends its body
 * at most once. Room for less would report ready while a large send is refused "disk is full".
 */
export const LARGEST_APPEND_BYTES = JSON_BODY_LIMIT_BYTES;

/** What /health and /metrics read of this process's runtime (API processes and workers). */
export const healthSources = (runtime: Runtime): HealthSources => {
  const { events, readModels } = runtime.stores;
  return {
    checkpoints: runtime.versions.checkpoints,
    projectorStatus: () => runtime.runner?.status() ?? null,
    roleOf: (checkpoint) => runtime.versions.role(checkpoint),
    refreshPositions: async () => {
      await runtime.projections.refresh();
      return (name) => runtime.projections.positionOf(name);
    },
    headPosition: () => events.headPosition(),
    firstEventAfter: async (position) => (await events.readAll({ after: position, maxCount: 1 }))[0] ?? null,
    leases: (names) => readModels.leases(names),
    parkedProjections: () => readModels.find(PROJECTOR_STATUS, { where: { state: 'parked' } }),
    storageFailure: () => runtime.storage.failing,
    probeStorage: () =>
      readModels.applyBatch(
        [{ collection: PROJECTOR_STATUS, kind: 'put', document: { _id: 'storage-probe', at: new Date().toISOString() }, position: String(Date.now()).padStart(20, '0') }],
        {},
      ),
    eventLogRoom: () => events.roomFor?.(LARGEST_APPEND_BYTES) ?? Promise.resolve(null),
  };
};

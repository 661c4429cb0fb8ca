import { HealthSources } from '../modules/health/health-sources';
import { PROJECTOR_STATUS } from '../shared/application/projection-runtime/projector-runner';
import { projectionOfPart } from '../shared/application/projection-runtime/projector/projection-parts';
import { Runtime } from './runtime';

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
    // A parked partition's note stands for its projection (health reports projections).
    parkedProjections: async () =>
      (await readModels.find(PROJECTOR_STATUS, { where: { state: 'parked' } })).map((note) => ({ ...note, _id: projectionOfPart(note._id) })),
    storageFailure: () => runtime.storage.failing,
    probeStorage: () =>
      readModels.applyBatch(
        [{ collection: PROJECTOR_STATUS, kind: 'put', document: { _id: 'storage-probe', at: new Date().toISOString() }, position: String(Date.now()).padStart(20, '0') }],
        {},
      ),
    eventLogSpaceLeft: () => events.spaceLeft?.() ?? Promise.resolve(null),
  };
};

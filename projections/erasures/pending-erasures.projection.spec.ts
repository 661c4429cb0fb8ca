import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { NO_COUNTS } from '../../src/modules/erasures/domain/erasure.decider';
import { PENDING_ERASURES, pendingErasureDocumentId, pendingErasuresProjection } from './pending-erasures.projection';

const at = '2026-01-01T00:00:00.000Z';
const requested = (stream: string) => recorded(stream, 'ErasureRequested', { user_id: 'alice', user_created_at: at, requested_by: { key_id: 'k', su: true }, requested_at: at });

describe('pending erasures projection', () => {
  it('lists an erasure from its request until it completes, through its progress', async () => {
    const a = requested('erasure-acme.e1');
    const b = requested('erasure-acme.e2');
    const progressed = recorded('erasure-acme.e1', 'ErasureProgressed', { step: 'counted', scanned_to: null, counts: NO_COUNTS, at });
    expect([...(await project(pendingErasuresProjection, [a, b, progressed])).keys()]).toEqual([
      `${PENDING_ERASURES}|${pendingErasureDocumentId('acme', 'e1')}`,
      `${PENDING_ERASURES}|${pendingErasureDocumentId('acme', 'e2')}`,
    ]);
    const docs = await project(pendingErasuresProjection, [a, b, recorded('erasure-acme.e1', 'ErasureCompleted', { counts: NO_COUNTS, completed_at: at })]);
    expect([...docs.values()].map((d) => d.id)).toEqual(['e2']);
  });

  it('drops the pending erasures of a wiped instance, and only those', async () => {
    const docs = await project(pendingErasuresProjection, [
      requested('erasure-acme.e1'),
      requested('erasure-other.e1'),
      recorded('wipes-acme.instance', 'InstanceWiped', { wiped_at: at }),
    ]);
    expect([...docs.values()].map((d) => d.instance_id)).toEqual(['other']);
  });
});

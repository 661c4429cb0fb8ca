import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { PENDING_DELETE_JOBS, pendingDeleteJobDocumentId, pendingDeleteJobsProjection } from './pending-delete-jobs.projection';

const at = '2026-01-01T00:00:00.000Z';
const scheduled = (stream: string, target_id: string) =>
  recorded(stream, 'DeleteJobScheduled', { target: 'room', target_id, requested_by: { key_id: 'k1', su: true }, scheduled_at: at });

describe('pending delete jobs projection', () => {
  it('lists a job from its scheduling until it completes or fails', async () => {
    const a = scheduled('deletejob-acme.j1', 'r1');
    const b = scheduled('deletejob-acme.j2', 'r2');
    expect([...(await project(pendingDeleteJobsProjection, [a, b])).keys()]).toEqual([
      `${PENDING_DELETE_JOBS}|${pendingDeleteJobDocumentId('acme', 'j1')}`,
      `${PENDING_DELETE_JOBS}|${pendingDeleteJobDocumentId('acme', 'j2')}`,
    ]);
    const docs = await project(pendingDeleteJobsProjection, [
      a,
      b,
      recorded('deletejob-acme.j1', 'DeleteJobCompleted', { completed_at: at }),
      recorded('deletejob-acme.j2', 'DeleteJobFailed', { reason: 'x', failed_at: at }),
    ]);
    expect(docs.size).toBe(0);
  });

  it('drops the pending jobs of a wiped instance, and only those', async () => {
    const docs = await project(pendingDeleteJobsProjection, [
      scheduled('deletejob-acme.j1', 'r1'),
      scheduled('deletejob-other.j1', 'r1'),
      recorded('wipes-acme.instance', 'InstanceWiped', { wiped_at: at }),
    ]);
    expect([...docs.values()].map((d) => d.instance_id)).toEqual(['other']);
  });
});

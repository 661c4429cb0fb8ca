import { fold } from '../../../shared/domain/decider';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { deleteJobDecider } from './delete-job.decider';
import { DeleteJobEvent } from './delete-job.events';

const now = '2026-01-01T00:00:00.000Z';
const by = { key_id: 'k', su: true };
const given = deciderSpecification(deleteJobDecider);
const scheduled: DeleteJobEvent = { type: 'DeleteJobScheduled', data: { target: 'room', target_id: 'r', requested_by: by, scheduled_at: now } };

describe('delete job decider', () => {
  it('schedules a job once', () => {
    given().when({ type: 'ScheduleDelete', target: 'room', targetId: 'r', requestedBy: by, now }).then([scheduled]);
    given(scheduled).when({ type: 'ScheduleDelete', target: 'room', targetId: 'r', requestedBy: by, now }).thenNothingHappened();
  });

  it('ends a pending job once: completing or failing it again decides nothing', () => {
    const completed: DeleteJobEvent = { type: 'DeleteJobCompleted', data: { completed_at: now } };
    given(scheduled).when({ type: 'CompleteJob', now }).then([completed]);
    given(scheduled, completed).when({ type: 'CompleteJob', now }).thenNothingHappened();
    given(scheduled, completed).when({ type: 'FailJob', reason: 'x', now }).thenNothingHappened();
    given().when({ type: 'CompleteJob', now }).thenNothingHappened();
  });

  it('keeps the reason of a failed job', () => {
    const failed: DeleteJobEvent = { type: 'DeleteJobFailed', data: { reason: 'refused', failed_at: now } };
    given(scheduled).when({ type: 'FailJob', reason: 'refused', now }).then([failed]);
    given(scheduled, failed).when({ type: 'CompleteJob', now }).thenNothingHappened();
    expect(fold(deleteJobDecider, [scheduled, failed])).toEqual({ status: 'failed', target: 'room', targetId: 'r', reason: 'refused', requestedBy: by });
  });
});

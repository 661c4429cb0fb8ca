import { fold } from '../../../shared/domain/decider';
import { deleteJobDecider, DeleteJobCommand } from './delete-job.decider';
import { DeleteJobEvent } from './delete-job.events';

const now = '2026-01-01T00:00:00.000Z';
const by = { key_id: 'k', su: true };
const given = (...events: DeleteJobEvent[]) => ({
  when: (command: DeleteJobCommand) => deleteJobDecider.decide(command, fold(deleteJobDecider, events)),
});
const scheduled: DeleteJobEvent = { type: 'DeleteJobScheduled', data: { target: 'room', target_id: 'r', requested_by: by, scheduled_at: now } };

describe('delete job decider', () => {
  it('schedules a job once', () => {
    expect(given().when({ type: 'ScheduleDelete', target: 'room', targetId: 'r', requestedBy: by, now })).toEqual([scheduled]);
    expect(given(scheduled).when({ type: 'ScheduleDelete', target: 'room', targetId: 'r', requestedBy: by, now })).toEqual([]);
  });

  it('ends a pending job once: completing or failing it again decides nothing', () => {
    const completed: DeleteJobEvent = { type: 'DeleteJobCompleted', data: { completed_at: now } };
    expect(given(scheduled).when({ type: 'CompleteJob', now })).toEqual([completed]);
    expect(given(scheduled, completed).when({ type: 'CompleteJob', now })).toEqual([]);
    expect(given(scheduled, completed).when({ type: 'FailJob', reason: 'x', now })).toEqual([]);
    expect(given().when({ type: 'CompleteJob', now })).toEqual([]);
  });

  it('keeps the reason of a failed job', () => {
    const failed: DeleteJobEvent = { type: 'DeleteJobFailed', data: { reason: 'refused', failed_at: now } };
    expect(given(scheduled).when({ type: 'FailJob', reason: 'refused', now })).toEqual([failed]);
    expect(fold(deleteJobDecider, [scheduled, failed])).toEqual({ status: 'failed', target: 'room', targetId: 'r', reason: 'refused', requestedBy: by });
  });
});

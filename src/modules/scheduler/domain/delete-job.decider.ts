import { Decider } from '../../../shared/domain/decider';
import { notFound } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { streamName } from '../../../shared/domain/streams';
import { DeleteJobEvent, DeleteTarget } from './delete-job.events';

/** One short stream per job: scheduled, then completed or failed. */
export const DELETE_JOB_CATEGORY = 'deletejob';
export const deleteJobStream = (instanceId: string, jobId: string) => streamName(DELETE_JOB_CATEGORY, instanceId, jobId);

export type JobStatus = 'pending' | 'completed' | 'failed';

export interface DeleteJobState {
  readonly status: JobStatus | null;
  readonly target: DeleteTarget | null;
  readonly targetId: string | null;
  readonly reason: string | null;
  readonly requestedBy: Actor | null;
}

export type DeleteJobCommand =
  | { type: 'ScheduleDelete'; target: DeleteTarget; targetId: string; requestedBy: Actor; now: string }
  | { type: 'CompleteJob'; now: string }
  | { type: 'FailJob'; reason: string; now: string };

export const jobNotFound = (id: string) => notFound('job_not_found', `There is no delete job "${id}"`);

/**
 * A delete job. Completing or failing a job that already ended decides nothing, so a job
 * run twice (after a crash, or by two API processes) ends once.
 */
export const deleteJobDecider: Decider<DeleteJobState, DeleteJobCommand, DeleteJobEvent> = {
  initialState: () => ({ status: null, target: null, targetId: null, reason: null, requestedBy: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'DeleteJobScheduled':
        const { target, target_id, requested_by } = event.data;
        return { status: 'pending', target, targetId: target_id, reason: null, requestedBy: requested_by };
      case 'DeleteJobCompleted':
        return { ...state, status: 'completed' };
      case 'DeleteJobFailed':
        return { ...state, status: 'failed', reason: event.data.reason };
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'ScheduleDelete':
        if (state.status !== null) return []; // the same job id scheduled again: nothing new
        return [
          {
            type: 'DeleteJobScheduled',
            data: { target: command.target, target_id: command.targetId, requested_by: command.requestedBy, scheduled_at: command.now },
          },
        ];
      case 'CompleteJob':
        return state.status === 'pending' ? [{ type: 'DeleteJobCompleted', data: { completed_at: command.now } }] : [];
      case 'FailJob':
        return state.status === 'pending' ? [{ type: 'DeleteJobFailed', data: { reason: command.reason, failed_at: command.now } }] : [];
    }
  },
};

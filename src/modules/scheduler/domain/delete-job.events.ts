import { Actor, DomainEvent } from '../../../shared/domain/event';

/** What an asynchronous delete removes. */
export type DeleteTarget = 'room' | 'user';

/** `requested_by` is who scheduled it: the delete itself is recorded under that actor, whenever it runs. */
export type DeleteJobScheduled = DomainEvent<
  'DeleteJobScheduled',
  { target: DeleteTarget; target_id: string; requested_by: Actor; scheduled_at: string }
>;
export type DeleteJobCompleted = DomainEvent<'DeleteJobCompleted', { completed_at: string }>;
/** The delete was refused for good (not a passing storage failure: those are retried). */
export type DeleteJobFailed = DomainEvent<'DeleteJobFailed', { reason: string; failed_at: string }>;

export type DeleteJobEvent = DeleteJobScheduled | DeleteJobCompleted | DeleteJobFailed;

export const DELETE_JOB_EVENT_TYPES: DeleteJobEvent['type'][] = ['DeleteJobScheduled', 'DeleteJobCompleted', 'DeleteJobFailed'];

import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { DeleteJobEvent, DeleteTarget } from '../../src/modules/scheduler/domain/delete-job.events';
import type { InstanceWiped } from '../../src/modules/wipe/domain/instance-wipe.decider';
import type { Document, ProjectionDefinition } from '../projection';

export const PENDING_DELETE_JOBS = 'pending_delete_jobs';
/** The job streams' category (`deletejob-<instance>.<job>`), as the scheduler's domain names it. */
const JOB_CATEGORY = 'deletejob';

export interface PendingDeleteJobDocument extends Document {
  readonly instance_id: string;
  readonly id: string;
  readonly target: DeleteTarget;
  readonly target_id: string;
  readonly scheduled_at: string;
}

export const pendingDeleteJobDocumentId = (instanceId: string, jobId: string) => documentId(instanceId, jobId);

/**
 * The work list of the delete-job runner: a job is here from its scheduling until it ends,
 * so a job whose process died is found again after a restart. (A job's status is read from
 * its stream, not from here.) An instance wipe drops its pending jobs with everything else.
 */
export const pendingDeleteJobsProjection: ProjectionDefinition<DeleteJobEvent | InstanceWiped, PendingDeleteJobDocument> = {
  name: 'pending_delete_jobs',
  version: 1,
  collections: [{ name: PENDING_DELETE_JOBS, indexes: [{ fields: ['instance_id'] }, { fields: ['scheduled_at'] }] }],
  handles: ['DeleteJobScheduled', 'DeleteJobCompleted', 'DeleteJobFailed', 'InstanceWiped'],

  targets(event) {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    if (event.type === 'InstanceWiped') return [{ collection: PENDING_DELETE_JOBS, where: { instance_id: stream.instanceId } }];
    if (stream.category !== JOB_CATEGORY) return [];
    return [{ collection: PENDING_DELETE_JOBS, id: pendingDeleteJobDocumentId(stream.instanceId, stream.id) }];
  },

  evolve(_document, event) {
    if (event.type !== 'DeleteJobScheduled') return null;
    const stream = parseStreamName(event.streamName)!;
    const { data } = event;
    return {
      _id: '',
      instance_id: stream.instanceId,
      id: stream.id,
      target: data.target,
      target_id: data.target_id,
      scheduled_at: data.scheduled_at,
    } satisfies PendingDeleteJobDocument;
  },
};

import { parseStreamName } from '../../../shared/domain/streams';
import { dataKeyIds, PersonalDataRule } from '../../../shared/domain/personal-data';
import { ReportFiled, ReportResolved } from './report.events';

/** What a reason or a note reads as once its key is destroyed. */
export const ERASED_REPORT_TEXT = '';

/**
 * A report's reason under a key of the report owned by the reporter's incarnation: their
 * erasure destroys it (and the wipe, the instance's every key); the report itself stays in
 * the queue, its reason gone.
 */
export const reportFiledPersonalData: PersonalDataRule<ReportFiled> = {
  type: 'ReportFiled',
  fields: ['reason'],
  erased: { reason: ERASED_REPORT_TEXT },
  keyOf(event, stream) {
    const instanceId = parseStreamName(stream)?.instanceId;
    if (instanceId === undefined) return null;
    const { report_id, reporter_id, reporter_created_at } = event.data;
    return { id: `${dataKeyIds.report(instanceId, report_id)}reason`, owner: dataKeyIds.owner(instanceId, reporter_id, reporter_created_at) };
  },
};

/** A moderator's note on a report (it may name the people involved) under a key of the report, owned by no user. */
export const reportResolvedPersonalData: PersonalDataRule<ReportResolved> = {
  type: 'ReportResolved',
  fields: ['note'],
  erased: { note: ERASED_REPORT_TEXT },
  keyOf(event, stream) {
    const instanceId = parseStreamName(stream)?.instanceId;
    return instanceId === undefined ? null : { id: `${dataKeyIds.report(instanceId, event.data.report_id)}note`, owner: null };
  },
};

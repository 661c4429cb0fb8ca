import { documentId, parseStreamName } from '../../src/shared/domain/streams';
import type { ErasureRequested } from '../../src/modules/erasures/domain/erasure.events';
import type { ReportEvent } from '../../src/modules/reports/domain/report.events';
import { ERASED_REPORT_TEXT } from '../../src/modules/reports/domain/report.personal-data';
import type { Document, ProjectionDefinition, Target } from '../projection';

export const REPORTS = 'reports';

export interface ReportResolution {
  readonly action: string;
  readonly note: string;
  readonly resolved_by?: string;
  readonly resolved_at: string;
}

/** One report in the review queue. The reported message's text is not here: the messages read model shows it while it exists. */
export interface ReportDocument extends Document {
  readonly instance_id: string;
  readonly report_id: string;
  readonly status: 'open' | 'resolved';
  /** `<filed_at>|<report_id>`: the queue's order, oldest first, and its paging cursor. */
  readonly queue_key: string;
  readonly reporter_id: string;
  readonly reporter_created_at: string;
  readonly target_kind: 'message' | 'user';
  readonly room_id?: string;
  readonly message_id?: number;
  /** The reported user: the message's sender, or the user reported. */
  readonly user_id: string;
  readonly category: string;
  readonly reason: string;
  /** The reporter's erasure took the reason. */
  readonly reason_erased?: true;
  readonly filed_at: string;
  readonly resolution?: ReportResolution;
}

export const reportDocumentId = (instanceId: string, reportId: string) => documentId(instanceId, reportId);

/**
 * The review queue: every report of the instance, open or resolved. A reporter's erasure
 * (from its request on) blanks the reasons they wrote, as destroying their keys blanks them in
 * the log; the wipe forgets the queue.
 */
export const reportsProjection: ProjectionDefinition<ReportEvent | ErasureRequested, ReportDocument> = {
  name: 'reports',
  version: 1,
  collections: [
    {
      name: REPORTS,
      indexes: [{ fields: ['instance_id', 'status', 'queue_key'] }, { fields: ['instance_id', 'queue_key'] }, { fields: ['instance_id', 'reporter_id'] }],
    },
  ],
  handles: ['ReportFiled', 'ReportResolved', 'ErasureRequested'],
  destroys: ['ErasureRequested'],

  targets(event): Target[] {
    const stream = parseStreamName(event.streamName);
    if (!stream) return [];
    switch (event.type) {
      case 'ReportFiled':
      case 'ReportResolved':
        return [{ collection: REPORTS, id: reportDocumentId(stream.instanceId, event.data.report_id) }];
      case 'ErasureRequested':
        return [{ collection: REPORTS, where: { instance_id: stream.instanceId, reporter_id: event.data.user_id, reporter_created_at: event.data.user_created_at } }];
      default:
        return [];
    }
  },

  evolve(doc, event, target) {
    switch (event.type) {
      case 'ReportFiled': {
        const { report_id, reporter_id, reporter_created_at, target: reported, category, reason, filed_at } = event.data;
        return {
          _id: target.id,
          instance_id: parseStreamName(event.streamName)!.instanceId,
          report_id,
          status: 'open',
          queue_key: `${filed_at}|${report_id}`,
          reporter_id,
          reporter_created_at,
          target_kind: reported.kind,
          ...(reported.kind === 'message' && { room_id: reported.room_id, message_id: reported.message_id }),
          user_id: reported.user_id,
          category,
          reason,
          ...((event.data as { erased?: boolean }).erased === true && { reason_erased: true as const }),
          filed_at,
        };
      }
      case 'ReportResolved': {
        if (!doc) return null;
        const { action, note, resolved_by, resolved_at } = event.data;
        return { ...doc, status: 'resolved', resolution: { action, note, ...(resolved_by !== undefined && { resolved_by }), resolved_at } };
      }
      case 'ErasureRequested':
        return doc && { ...doc, reason: ERASED_REPORT_TEXT, reason_erased: true };
      default:
        return doc;
    }
  },
};

import { ReportDocument } from '../../../../projections/reports/reports.projection';
import { MessagesReadModel } from '../../messages/messages.read-model';
import { AttachmentResolver } from '../../messages/presentation/attachments.port';
import { MessageResponse, presentMessage } from '../../messages/presentation/message.presenter';
import { messageOrReply, ThreadsReadModel } from '../../threads/threads.read-model';

export interface ReportView {
  readonly id: string;
  readonly status: 'open' | 'resolved';
  readonly category: string;
  readonly reason: string;
  readonly reason_erased?: true;
  readonly reporter_id: string;
  readonly filed_at: string;
  readonly target:
    | { kind: 'message'; room_id: string; message_id: number; user_id: string; message: MessageResponse | null }
    | { kind: 'user'; user_id: string };
  readonly resolution?: ReportDocument['resolution'];
}

/**
 * A report as moderators read it. A message's report shows the message as v6 shows it while it
 * exists (null once deleted: the report keeps no copy of its text).
 */
export async function presentReport(
  doc: ReportDocument,
  messages: MessagesReadModel,
  threads: ThreadsReadModel,
  attachments: AttachmentResolver,
): Promise<ReportView> {
  let target: ReportView['target'];
  if (doc.target_kind === 'message') {
    // A reply shown in its thread alone is reportable as any message: moderators see it too (with its parent_id).
    const message = await messageOrReply(messages, threads, doc.instance_id, doc.room_id!, doc.message_id!);
    const shown = message && message.deleted_at === undefined ? presentMessage(6, message, attachments) : null;
    target = { kind: 'message', room_id: doc.room_id!, message_id: doc.message_id!, user_id: doc.user_id, message: shown };
  } else {
    target = { kind: 'user', user_id: doc.user_id };
  }
  return {
    id: doc.report_id,
    status: doc.status,
    category: doc.category,
    reason: doc.reason,
    ...(doc.reason_erased && { reason_erased: true as const }),
    reporter_id: doc.reporter_id,
    filed_at: doc.filed_at,
    target,
    ...(doc.resolution && { resolution: doc.resolution }),
  };
}

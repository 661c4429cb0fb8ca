import { DomainEvent } from '../../../shared/domain/event';

/** What a report names: one message of a room (and its sender), or a user. */
export type ReportTarget =
  | { kind: 'message'; room_id: string; room_created_at: string; message_id: number; user_id: string }
  | { kind: 'user'; user_id: string };

/**
 * A report filed by a user, on the reporter's own reports stream (`reports-<instance>.<user>`),
 * so that one decision sees every report of theirs (one open report per target, a cap on open
 * reports). `reason` is the reporter's words: sealed under a key of the report owned by the
 * reporter's incarnation (their erasure destroys it). The reported message's text is never
 * copied: a report shows the message as the read model holds it, so its delete takes it.
 */
export type ReportFiled = DomainEvent<
  'ReportFiled',
  {
    report_id: string;
    reporter_id: string;
    reporter_created_at: string;
    target: ReportTarget;
    /** The room of a message's report, beside the target: what the audit files it under. */
    room_id?: string;
    category: string;
    reason: string;
    filed_at: string;
  }
>;

/**
 * A report closed by a moderator (an su token), on the same stream. `note` is the moderator's
 * words about it: sealed under the report's key (the wipe destroys it).
 */
export type ReportResolved = DomainEvent<
  'ReportResolved',
  { report_id: string; action: string; note: string; resolved_by?: string; resolved_at: string }
>;

export type ReportEvent = ReportFiled | ReportResolved;

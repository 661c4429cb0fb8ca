import { Decider } from '../../../shared/domain/decider';
import { conflict, notFound, unprocessable } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { ReportEvent, ReportTarget } from './report.events';
import { ReportCategory, ResolutionAction } from './report-vocabulary';

/** A reporter's reports: one stream per reporting user id, every incarnation of it. */
export const reportsStream = (instanceId: string, reporterId: string) => streamName('reports', instanceId, reporterId);

export const MAX_REASON_LENGTH = 500;
export const MAX_NOTE_LENGTH = 1000;
/** Open reports one user may have at once: enough for anyone reporting in good faith, and a bound on a flood. */
export const MAX_OPEN_REPORTS_PER_REPORTER = 50;

/** One report as decisions need it. */
interface Report {
  readonly reporterCreatedAt: string;
  readonly target: string;
  readonly open: boolean;
}

export interface ReportsState {
  readonly reports: ReadonlyMap<string, Report>;
}

export type ReportsCommand =
  | {
      type: 'FileReport';
      reportId: string;
      reporter: { userId: string; userCreatedAt: string };
      target: ReportTarget;
      category: ReportCategory;
      reason: string;
      now: string;
    }
  | { type: 'ResolveReport'; reportId: string; action: ResolutionAction; note: string; resolvedBy?: string; now: string };

/** A target as one string: the same message (of the same room incarnation) or the same user. */
export const targetKey = (target: ReportTarget): string =>
  target.kind === 'message' ? `message:${target.room_id}@${target.room_created_at}:${target.message_id}` : `user:${target.user_id}`;

export const reportNotFound = (id: string) => notFound('report_not_found', `The report does not exist: "${id}"`);

/** The open report of this reporter incarnation about `target`, if any: filing again answers it rather than a second one. */
export const openReportAbout = (state: ReportsState, reporterCreatedAt: string, target: ReportTarget): string | undefined => {
  const key = targetKey(target);
  for (const [id, report] of state.reports) if (report.open && report.reporterCreatedAt === reporterCreatedAt && report.target === key) return id;
  return undefined;
};

/** Decides a reporter's reports: one open report per target (filing again changes nothing), a cap on open ones, resolved once. */
export const reportsDecider: Decider<ReportsState, ReportsCommand, ReportEvent> = {
  initialState: () => ({ reports: new Map() }),
  evolve(state, event) {
    const reports = new Map(state.reports);
    if (event.type === 'ReportFiled') {
      reports.set(event.data.report_id, { reporterCreatedAt: event.data.reporter_created_at, target: targetKey(event.data.target), open: true });
    } else {
      const report = reports.get(event.data.report_id);
      if (report) reports.set(event.data.report_id, { ...report, open: false });
    }
    return { reports };
  },

  decide(command, state) {
    if (command.type === 'ResolveReport') {
      const report = state.reports.get(command.reportId);
      if (!report) throw reportNotFound(command.reportId);
      if (!report.open) throw conflict('report_resolved', `The report "${command.reportId}" is resolved already`);
      return [
        {
          type: 'ReportResolved',
          data: {
            report_id: command.reportId,
            action: command.action,
            note: command.note,
            ...(command.resolvedBy !== undefined && { resolved_by: command.resolvedBy }),
            resolved_at: command.now,
          },
        },
      ];
    }
    const { reporter, target } = command;
    if (openReportAbout(state, reporter.userCreatedAt, target) !== undefined) return [];
    const open = [...state.reports.values()].filter((r) => r.open && r.reporterCreatedAt === reporter.userCreatedAt).length;
    if (open >= MAX_OPEN_REPORTS_PER_REPORTER) {
      throw unprocessable('too_many_reports', `A user may have at most ${MAX_OPEN_REPORTS_PER_REPORTER} open reports; they count again once moderators resolve them`);
    }
    return [
      {
        type: 'ReportFiled',
        data: {
          report_id: command.reportId,
          reporter_id: reporter.userId,
          reporter_created_at: reporter.userCreatedAt,
          target,
          ...(target.kind === 'message' && { room_id: target.room_id }),
          category: command.category,
          reason: command.reason,
          filed_at: command.now,
        },
      },
    ];
  },
};

import { DomainError } from '../../../shared/domain/errors';
import { deciderSpecification } from '../../../../test/support/decider-specification';
import { ReportEvent, ReportTarget } from './report.events';
import { MAX_OPEN_REPORTS_PER_REPORTER, ReportsCommand, reportsDecider } from './reports.decider';

describe('reportsDecider', () => {
  const given = deciderSpecification(reportsDecider);
  const now = '2026-01-01T00:00:00.000Z';
  const user = (id: string): ReportTarget => ({ kind: 'user', user_id: id });
  const file = (reportId: string, target: ReportTarget, userCreatedAt = 'u1'): ReportsCommand => ({
    type: 'FileReport',
    reportId,
    reporter: { userId: 'ann', userCreatedAt },
    target,
    category: 'spam',
    reason: 'why',
    now,
  });
  const filed = (reportId: string, target: ReportTarget, reporterCreatedAt = 'u1'): ReportEvent => ({
    type: 'ReportFiled',
    data: { report_id: reportId, reporter_id: 'ann', reporter_created_at: reporterCreatedAt, target, category: 'spam', reason: 'why', filed_at: now },
  });
  const resolve = (reportId: string): ReportsCommand => ({ type: 'ResolveReport', reportId, action: 'dismiss', note: '', now });
  const resolved = (reportId: string): ReportEvent => ({ type: 'ReportResolved', data: { report_id: reportId, action: 'dismiss', note: '', resolved_at: now } });

  it('files one open report per target; a resolved one, or another incarnation’s, does not count', () => {
    given().when(file('r1', user('bob'))).then([filed('r1', user('bob'))]);
    given(filed('r1', user('bob'))).when(file('r2', user('bob'))).then([]);
    given(filed('r1', user('bob')), resolved('r1')).when(file('r2', user('bob'))).then([filed('r2', user('bob'))]);
    given(filed('r1', user('bob'), 'u0')).when(file('r2', user('bob'))).then([filed('r2', user('bob'))]);
    const message: ReportTarget = { kind: 'message', room_id: 'lobby', room_created_at: 'c', message_id: 7, user_id: 'bob' };
    given(filed('r1', user('bob'))).when(file('r2', message)).then([{ ...filed('r2', message), data: { ...filed('r2', message).data, room_id: 'lobby' } } as ReportEvent]);
  });

  it(`caps open reports at ${MAX_OPEN_REPORTS_PER_REPORTER} per reporter`, () => {
    const full = Array.from({ length: MAX_OPEN_REPORTS_PER_REPORTER }, (_, i) => filed(`r${i}`, user(`u${i}`)));
    given(...full).when(file('x', user('bob'))).thenThrows(DomainError, { code: 'unprocessable_entity/too_many_reports' });
    given(...full, resolved('r0')).when(file('x', user('bob'))).then([filed('x', user('bob'))]);
  });

  it('resolves an open report once; an unknown one is not found', () => {
    given(filed('r1', user('bob'))).when(resolve('r1')).then([resolved('r1')]);
    given(filed('r1', user('bob')), resolved('r1')).when(resolve('r1')).thenThrows(DomainError, { code: 'conflict/report_resolved' });
    given().when(resolve('r1')).thenThrows(DomainError, { code: 'not_found/report_not_found' });
  });
});

import { project } from '../../test/support/projection-fold';
import { recorded } from '../testing';
import { reportsProjection } from './reports.projection';

describe('reports projection', () => {
  const filed = (id: string, reporter: string, reason: string, erased = false) =>
    recorded(`reports-acme.${reporter}`, 'ReportFiled', {
      report_id: id,
      reporter_id: reporter,
      reporter_created_at: 'c1',
      target: { kind: 'message', room_id: 'lobby', room_created_at: 'r', message_id: 7, user_id: 'bob' },
      room_id: 'lobby',
      category: 'spam',
      reason,
      filed_at: `2026-01-01T00:00:0${id}.000Z`,
      ...(erased && { erased: true }),
    });

  it('queues reports in filing order; a resolution closes one; the reporter’s erasure blanks their reasons only', async () => {
    const docs = await project(reportsProjection, [
      filed('1', 'ann', 'spam!'),
      filed('2', 'cy', 'rude'),
      recorded('reports-acme.ann', 'ReportResolved', { report_id: '1', action: 'dismiss', note: 'ok', resolved_at: 't' }),
      recorded('erasure-acme.e1', 'ErasureRequested', { user_id: 'cy', user_created_at: 'c1', requested_by: {}, requested_at: 't' }),
      filed('3', 'dee', '', true),
    ]);
    expect([...docs.values()].map((d) => [d.report_id, d.status, d.reason, d.reason_erased, d.queue_key])).toEqual([
      ['1', 'resolved', 'spam!', undefined, '2026-01-01T00:00:01.000Z|1'],
      ['2', 'open', '', true, '2026-01-01T00:00:02.000Z|2'],
      ['3', 'open', '', true, '2026-01-01T00:00:03.000Z|3'],
    ]);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { contentsOf } from '../support/sqlite-files';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

describe('reports and the review queue', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const su = () => s.token({ su: true });
  const admin = (path: string) => `/services/parley_admin/v1/${s.instanceId}${path}`;
  const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
  const send = async (room: string, text: string, user = 'ann') =>
    (await s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content: text }] }, token: as(user) })).body
      .message_id as number;
  const reportMessage = (room: string, id: number, user: string, body: object = { category: 'spam' }) =>
    s.request('POST', s.chat(`/rooms/${room}/messages/${id}/reports`), { body, token: as(user) });
  const reportUser = (target: string, user: string, body: object = { category: 'harassment' }) =>
    s.request('POST', s.chat(`/users/${encodeURIComponent(target)}/reports`), { body, token: as(user) });
  const queue = async (query = '') => {
    const listed = await s.request('GET', admin(`/reports${query}`), { token: su() });
    expect(listed.status).toBe(200);
    return listed.body as { reports: any[]; next?: string };
  };
  const expectError = async (response: Promise<{ status: number; body: any }>, status: number, reason: string) => {
    const answer = await response;
    expect([answer.status, answer.body.error]).toEqual([status, expect.stringMatching(new RegExp(`/${reason}$`))]);
  };

  beforeAll(async () => {
    s = await startTestServer();
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'eve'].map((id) => ({ id, name: id })) } });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['ben', 'cat'] }, token: as('ann') });
  });
  afterAll(() => s.close());

  it('files a report of a message once per reporter; the queue shows it with the message, and a moderator resolves it', async () => {
    const id = await send('lobby', 'buy cheap watches');
    const filed = await reportMessage('lobby', id, 'ben', { category: 'spam', reason: 'an advert' });
    expect(filed.status).toBe(201);
    expect(filed.body).toEqual({ id: expect.any(String), status: 'open' });
    const again = await reportMessage('lobby', id, 'ben', { category: 'spam' });
    expect([again.status, again.body.id]).toEqual([200, filed.body.id]);
    const other = await reportMessage('lobby', id, 'cat', { category: 'other', reason: 'not here' });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(filed.body.id);

    const { reports } = await queue();
    expect(reports.map((r) => r.id)).toEqual([filed.body.id, other.body.id]);
    expect(reports[0]).toEqual({
      id: filed.body.id,
      status: 'open',
      category: 'spam',
      reason: 'an advert',
      reporter_id: 'ben',
      filed_at: expect.any(String),
      target: {
        kind: 'message',
        room_id: 'lobby',
        message_id: id,
        user_id: 'ann',
        message: expect.objectContaining({ id, user_id: 'ann', parts: [{ type: 'text/plain', content: 'buy cheap watches' }] }),
      },
    });
    expect((await s.request('GET', admin(`/reports/${filed.body.id}`), { token: su() })).body).toEqual(reports[0]);
    // Showing the reported message's content is a recorded read, as the console's room reads are.
    const history = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/messages/${id}`, { token: su() });
    expect(JSON.stringify(history.body)).toContain('MessageContentRead');

    const resolved = await s.request('POST', admin(`/reports/${filed.body.id}/resolve`), { body: { action: 'dismiss', note: 'fine' }, token: su() });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'resolved', resolution: { action: 'dismiss', note: 'fine', resolved_at: expect.any(String) } });
    await expectError(s.request('POST', admin(`/reports/${filed.body.id}/resolve`), { body: { action: 'dismiss' }, token: su() }), 409, 'report_resolved');
    expect((await queue()).reports.map((r) => r.id)).toEqual([other.body.id]);
    expect((await queue('?status=resolved')).reports.map((r) => r.id)).toEqual([filed.body.id]);
    // Resolved, the same reporter may report it again: a new report.
    const later = await reportMessage('lobby', id, 'ben');
    expect([later.status, later.body.id === filed.body.id]).toEqual([201, false]);
  });

  it('shows moderators a reported reply that is in its thread alone, with its parent_id; that read is in its history', async () => {
    const parent = await send('lobby', 'a question');
    const replied = await s.request('POST', s.chat(`/rooms/lobby/messages/${parent}/replies`), { body: { parts: [{ type: 'text/plain', content: 'a rude answer' }] }, token: as('ben') });
    const replyId = replied.body.message_id as number;
    const filed = await reportMessage('lobby', replyId, 'cat', { category: 'harassment' });
    expect(filed.status).toBe(201);
    const shown = await s.request('GET', admin(`/reports/${filed.body.id}`), { token: su() });
    expect(shown.body.target).toEqual({
      kind: 'message',
      room_id: 'lobby',
      message_id: replyId,
      user_id: 'ben',
      message: expect.objectContaining({ id: replyId, user_id: 'ben', parent_id: parent, parts: [{ type: 'text/plain', content: 'a rude answer' }] }),
    });
    const history = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/messages/${replyId}`, { token: su() });
    expect(history.body.events.map((e: any) => e.type)).toEqual(['MessageSent', 'MessageContentRead']);
  });

  it('reports a user; pages the queue oldest first with a cursor', async () => {
    const filed = await reportUser('eve', 'ann', { category: 'impersonation' });
    expect(filed.status).toBe(201);
    const shown = await s.request('GET', admin(`/reports/${filed.body.id}`), { token: su() });
    expect(shown.body).toMatchObject({ category: 'impersonation', reason: '', reporter_id: 'ann', target: { kind: 'user', user_id: 'eve' } });

    const all = (await queue('?status=all&limit=100')).reports.map((r) => r.id);
    const first = await queue('?status=all&limit=2');
    expect(first.reports.map((r) => r.id)).toEqual(all.slice(0, 2));
    const second = await queue(`?status=all&limit=2&after=${encodeURIComponent(first.next!)}`);
    expect(second.reports.map((r) => r.id)).toEqual(all.slice(2, 4));
    await expectError(s.request('GET', admin('/reports?status=closed'), { token: su() }), 422, 'invalid_status');
    await expectError(s.request('GET', admin('/reports?limit=1000'), { token: su() }), 422, 'invalid_limit');
    await expectError(s.request('GET', admin('/reports/nope'), { token: su() }), 404, 'report_not_found');
  });

  it('answers bad reports with a clear 4xx and files nothing', async () => {
    const before = (await queue('?status=all&limit=100')).reports.length;
    const id = await send('lobby', 'x', 'ben');
    await s.request('POST', s.chat('/rooms'), { body: { id: 'private', name: 'private', private: true }, token: as('ann') });
    const hidden = await send('private', 'y');
    await s.request('POST', s.chat('/rooms'), { body: { id: 'elsewhere', name: 'elsewhere', user_ids: ['cat'] }, token: as('ann') });
    await expectError(reportMessage('lobby', id, 'cat', { category: 'nonsense' }), 422, 'validation_failed');
    await expectError(reportMessage('lobby', id, 'cat', { category: 'spam', reason: 'x'.repeat(501) }), 422, 'validation_failed');
    await expectError(reportMessage('lobby', id, 'cat', {}), 422, 'validation_failed');
    await expectError(reportMessage('lobby', id, 'ben'), 422, 'cannot_report_self');
    await expectError(reportUser('ben', 'ben'), 422, 'cannot_report_self');
    await expectError(reportUser('nobody', 'ben'), 404, 'user_not_found');
    await expectError(reportMessage('lobby', 999_999, 'cat'), 404, 'message_not_found');
    await expectError(reportMessage('elsewhere', id, 'cat'), 404, 'message_not_found');
    await expectError(reportMessage('private', hidden, 'eve'), 404, 'room_not_found');
    const gone = await send('lobby', 'soon gone');
    expect((await s.request('DELETE', s.chat(`/rooms/lobby/messages/${gone}`), { token: as('ann') })).status).toBe(204);
    await expectError(reportMessage('lobby', gone, 'cat'), 404, 'message_not_found');
    await expectError(s.request('POST', s.chat('/users/eve/reports'), { body: { category: 'spam' }, token: su() }), 400, 'missing_user');
    expect((await s.request('POST', s.chat(`/rooms/lobby/messages/${id}/reports`, 'v2'), { body: { category: 'spam' }, token: as('cat') })).status).toBe(404);
    expect((await queue('?status=all&limit=100')).reports).toHaveLength(before);
  });

  it('needs report:create to report; only su tokens read and resolve the queue', async () => {
    const id = await send('lobby', 'z');
    expect((await s.request('POST', authz('/roles'), { body: { name: 'no-reports', scope: 'global', permissions: ['room:messages:get', 'room:get'] } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/cat/roles'), { body: { name: 'no-reports' } })).status).toBe(201);
    const refused = await reportMessage('lobby', id, 'cat');
    expect([refused.status, refused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect(refused.body.error_description).toContain('report:create');
    expect((await reportUser('eve', 'cat')).status).toBe(403);
    expect((await s.request('DELETE', authz('/users/cat/roles'))).status).toBe(204);

    const filed = await reportUser('eve', 'cat');
    expect(filed.status).toBe(201);
    for (const token of [as('ben'), as('eve')]) {
      expect((await s.request('GET', admin('/reports'), { token })).status).toBe(403);
      expect((await s.request('GET', admin(`/reports/${filed.body.id}`), { token })).status).toBe(403);
      expect((await s.request('POST', admin(`/reports/${filed.body.id}/resolve`), { body: { action: 'dismiss' }, token })).status).toBe(403);
    }
    expect((await s.request('GET', admin('/reports'), { token: null })).status).toBe(401);
    expect((await s.request('GET', admin(`/reports/${filed.body.id}`), { token: su() })).body.status).toBe('open');
  });

  it('delete_message deletes the reported message; a deleted message leaves its report without its text; the audit shows reports', async () => {
    const spam = await send('lobby', 'click this link', 'cat');
    const filed = await reportMessage('lobby', spam, 'ben');
    await expectError(s.request('POST', admin(`/reports/${filed.body.id}/resolve`), { body: { action: 'ban' }, token: su() }), 422, 'validation_failed');
    const resolved = await s.request('POST', admin(`/reports/${filed.body.id}/resolve`), { body: { action: 'delete_message' }, token: su() });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'resolved', resolution: { action: 'delete_message' }, target: { message_id: spam, message: null } });
    expect((await s.request('GET', s.chat(`/rooms/lobby/messages/${spam}`), { token: as('ben') })).status).toBe(404);

    const rude = await send('lobby', 'you are all fools', 'cat');
    const second = await reportMessage('lobby', rude, 'ann', { category: 'harassment' });
    expect((await s.request('DELETE', s.chat(`/rooms/lobby/messages/${rude}`), { token: as('cat') })).status).toBe(204);
    const shown = await s.request('GET', admin(`/reports/${second.body.id}`), { token: su() });
    expect(shown.body).toMatchObject({ status: 'open', category: 'harassment', target: { kind: 'message', message_id: rude, user_id: 'cat', message: null } });
    expect(JSON.stringify(shown.body)).not.toContain('fools');
    await expectError(
      s.request('POST', admin(`/reports/${(await reportUser('eve', 'ann')).body.id}/resolve`), { body: { action: 'delete_message' }, token: su() }),
      422,
      'invalid_action',
    );

    const audit = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/lobby`, { token: su() });
    expect(JSON.stringify(audit.body)).toContain('ReportFiled');
  });
});

describe('report reasons in the files', () => {
  let dataDir: string;
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const su = () => s.token({ su: true });
  const marker = (what: string) => `${what}${randomBytes(6).toString('hex')}`;
  const files = () => ['read-models.sqlite', 'read-models.sqlite-wal', 'events.sqlite', 'events.sqlite-wal'].map((f) => join(dataDir, f));
  const foundIn = (markers: readonly string[], only = files()) => new Set(scanForMarkers({ files: only }, markers).map((f) => f.marker));

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-reports-'));
    s = await startTestServer({ dataDir });
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cy'].map((id) => ({ id, name: id })) } });
  });
  afterAll(async () => {
    await s?.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("seals reasons and notes in the log; the reporter's erasure removes their reasons from the queue and the files, and the report stays", async () => {
    const reason = marker('reason');
    const note = marker('note');
    const kept = marker('kept');
    const filed = await s.request('POST', s.chat('/users/ann/reports'), { body: { category: 'other', reason }, token: as('cy') });
    const other = await s.request('POST', s.chat('/users/ann/reports'), { body: { category: 'other', reason: kept }, token: as('ben') });
    expect([filed.status, other.status]).toEqual([201, 201]);
    expect((await s.request('POST', `/services/parley_admin/v1/${s.instanceId}/reports/${other.body.id}/resolve`, { body: { action: 'other', note }, token: su() })).status).toBe(200);
    expect(foundIn([reason, note], files().slice(2)).size).toBe(0); // sealed in the log
    expect(foundIn([reason, note, kept]).size).toBe(3); // the queue shows them

    const requested = await s.request('POST', `/services/parley_admin/v1/${s.instanceId}/erasures`, { body: { user_id: 'cy' }, token: su() });
    expect(requested.status).toBe(202);
    await eventually(
      async () => (await s.request('GET', `/services/parley_admin/v1/${s.instanceId}/erasures/${requested.body.id}`, { token: su() })).body.status === 'completed',
      { what: 'the erasure completed' },
    );
    const shown = await s.request('GET', `/services/parley_admin/v1/${s.instanceId}/reports/${filed.body.id}`, { token: su() });
    expect(shown.body).toMatchObject({ status: 'open', category: 'other', reason: '', reason_erased: true, reporter_id: 'cy', target: { kind: 'user', user_id: 'ann' } });
    expect(foundIn([reason]).size).toBe(0);
    expect(foundIn([kept]).size).toBe(1);
  });

  it('the instance wipe forgets every report and mute, reasons and notes included', async () => {
    const reason = marker('wiped');
    expect((await s.request('POST', s.chat('/users/ann/reports'), { body: { category: 'spam', reason }, token: as('ben') })).status).toBe(201);
    expect((await s.request('PUT', s.chat('/users/ben/mutes/ann'), { token: as('ben') })).status).toBe(204);
    const rowsOf = () => {
      const tables = contentsOf(join(dataDir, 'read-models.sqlite'));
      return ['rm_reports_v1', 'rm_mutes_v1'].map((name) => (tables[name] ?? []).length);
    };
    expect(rowsOf().every((n) => n > 0)).toBe(true);
    expect((await s.request('DELETE', s.chat('/resources'), { token: su() })).status).toBe(204);
    await eventually(() => rowsOf().every((n) => n === 0), { what: 'the wiped instance’s reports and mutes forgotten' });
    expect(foundIn([reason]).size).toBe(0);
  });
});

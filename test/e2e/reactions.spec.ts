import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { contentsOf } from '../support/sqlite-files';
import { openHttpSubscription } from '../support/subscribe-client';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

describe('reactions to messages (v6)', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
  const reactions = (room: string, id: number, rest = '') => s.chat(`/rooms/${room}/messages/${id}/reactions${rest}`);
  const react = (room: string, id: number, type: string, user: string, method: 'PUT' | 'DELETE' = 'PUT') =>
    s.request(method, reactions(room, id, `/${encodeURIComponent(type)}`), { token: as(user) });
  const send = async (room: string, text: string, user = 'ann') =>
    (await s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content: text }] }, token: as(user) })).body
      .message_id as number;
  const fetchOne = async (room: string, id: number, user: string, version: 'v2' | 'v6' = 'v6') => {
    const page = await s.request('GET', s.chat(`/rooms/${room}/messages?initial_id=${id + 1}&limit=1`, version), { token: as(user) });
    expect(page.status).toBe(200);
    return page.body[0];
  };

  beforeAll(async () => {
    s = await startTestServer();
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben', 'cat', 'dan', 'eve'].map((id) => ({ id, name: id })) } });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['ben', 'cat', 'dan'] }, token: as('ann') });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'other', name: 'other' }, token: as('ann') });
    await s.request('POST', s.chat('/rooms'), { body: { id: 'vault', name: 'vault', private: true }, token: as('ann') });
  });
  afterAll(() => s.close());

  it('adds and removes a reaction idempotently; messages show counts per type, the caller\'s own and the latest', async () => {
    const id = await send('lobby', 'react to me');
    expect((await react('lobby', id, '👍', 'ben')).status).toBe(204);
    expect((await react('lobby', id, '👍', 'ben')).status).toBe(204); // again: nothing more
    expect((await react('lobby', id, '👍', 'cat')).status).toBe(204);
    expect((await react('lobby', id, ':tada:', 'cat')).status).toBe(204);

    const asBen = await fetchOne('lobby', id, 'ben');
    expect(asBen.reactions).toEqual({
      counts: { '👍': 2, ':tada:': 1 },
      mine: ['👍'],
      latest: [
        { type: ':tada:', user_id: 'cat', created_at: expect.any(String) },
        { type: '👍', user_id: 'cat', created_at: expect.any(String) },
        { type: '👍', user_id: 'ben', created_at: expect.any(String) },
      ],
    });
    expect((await fetchOne('lobby', id, 'cat')).reactions.mine.sort()).toEqual([':tada:', '👍'].sort());
    const single = await s.request('GET', s.chat(`/rooms/lobby/messages/${id}`), { token: as('dan') });
    expect(single.body.reactions).toMatchObject({ counts: { '👍': 2, ':tada:': 1 }, mine: [] });
    // v2 shows messages as Chatkit did; a message without reactions has no field at all.
    expect(await fetchOne('lobby', id, 'ben', 'v2')).not.toHaveProperty('reactions');
    expect(await fetchOne('lobby', await send('lobby', 'plain'), 'ben')).not.toHaveProperty('reactions');

    expect((await react('lobby', id, '👍', 'ben', 'DELETE')).status).toBe(204);
    expect((await react('lobby', id, '👍', 'ben', 'DELETE')).status).toBe(204); // again: nothing to remove
    const after = await fetchOne('lobby', id, 'ben');
    expect(after.reactions).toMatchObject({ counts: { '👍': 1, ':tada:': 1 }, mine: [] });
    expect(after.reactions.latest.map((r: { user_id: string }) => r.user_id)).toEqual(['cat', 'cat']);
  });

  it('pages who reacted, oldest first, optionally of one type', async () => {
    const id = await send('lobby', 'popular');
    for (const user of ['ben', 'cat', 'dan', 'ann']) expect((await react('lobby', id, '❤️', user)).status).toBe(204);
    expect((await react('lobby', id, '😂', 'ben')).status).toBe(204);

    const first = await s.request('GET', reactions('lobby', id, '?limit=2'), { token: as('ben') });
    expect(first.status).toBe(200);
    expect(first.body.reactions).toEqual([
      { type: '❤️', user_id: 'ben', created_at: expect.any(String) },
      { type: '❤️', user_id: 'cat', created_at: expect.any(String) },
    ]);
    expect(typeof first.body.next).toBe('string');
    const second = await s.request('GET', reactions('lobby', id, `?limit=2&after=${encodeURIComponent(first.body.next)}`), { token: as('ben') });
    expect(second.body.reactions.map((r: { user_id: string }) => r.user_id)).toEqual(['dan', 'ann']);
    const third = await s.request('GET', reactions('lobby', id, `?limit=2&after=${encodeURIComponent(second.body.next)}`), { token: as('ben') });
    expect(third.body).toEqual({ reactions: [{ type: '😂', user_id: 'ben', created_at: expect.any(String) }] });

    const ofType = await s.request('GET', reactions('lobby', id, `?type=${encodeURIComponent('😂')}`), { token: as('cat') });
    expect(ofType.body.reactions.map((r: { user_id: string }) => r.user_id)).toEqual(['ben']);
    expect((await s.request('GET', reactions('lobby', id, '?limit=101'), { token: as('cat') })).status).toBe(422);
  });

  it('answers bad input with a clear 4xx and stores nothing', async () => {
    const id = await send('lobby', 'limits');
    const expectError = async (response: Promise<{ status: number; body: any }>, status: number, reason: string) => {
      const answer = await response;
      expect([answer.status, answer.body.error]).toEqual([status, `services/chatkit/${reason}`]);
    };
    await expectError(react('lobby', id, 'x'.repeat(33), 'ben'), 422, 'unprocessable_entity/reaction_type_too_long');
    expect((await react('lobby', id, 'x'.repeat(32), 'ben')).status).toBe(204);
    await expectError(react('lobby', id, 'two words', 'ben'), 422, 'unprocessable_entity/invalid_reaction_type');
    await expectError(react('lobby', 999_999, '👍', 'ben'), 404, 'not_found/message_not_found');
    await expectError(react('other', id, '👍', 'ann'), 404, 'not_found/message_not_found'); // a message of another room
    await expectError(react('lobby', id, '👍', 'eve'), 403, 'forbidden/not_a_member');
    await expectError(react('vault', id, '👍', 'ben'), 404, 'not_found/room_not_found');
    const noUser = await s.request('PUT', reactions('lobby', id, '/ok'), { token: s.token({ su: true }) });
    expect([noUser.status, noUser.body.error]).toEqual([400, 'services/chatkit/bad_request/missing_user']);
    expect((await s.request('PUT', s.chat(`/rooms/lobby/messages/${id}/reactions/ok`, 'v2'), { token: as('ben') })).status).toBe(404);

    // Twenty distinct types fit (one is there already); a twenty-first new one does not, an existing one still does.
    for (let i = 1; i < 20; i++) expect((await react('lobby', id, `t${i}`, 'cat')).status).toBe(204);
    await expectError(react('lobby', id, 't20', 'dan'), 422, 'unprocessable_entity/too_many_reaction_types');
    expect((await react('lobby', id, 't1', 'dan')).status).toBe(204);
    expect(Object.keys((await fetchOne('lobby', id, 'ben')).reactions.counts)).toHaveLength(20);

    const deleted = await send('lobby', 'to go');
    expect((await s.request('DELETE', s.chat(`/rooms/lobby/messages/${deleted}`), { token: as('ann') })).status).toBe(204);
    await expectError(react('lobby', deleted, '👍', 'ben'), 404, 'not_found/message_not_found');
  });

  it('needs message:react to react and room:messages:get to list; su needs neither', async () => {
    const id = await send('lobby', 'permissions');
    expect((await s.request('POST', authz('/roles'), { body: { name: 'reader', scope: 'global', permissions: ['room:messages:get', 'room:get'] } })).status).toBe(201);
    expect((await s.request('POST', authz('/roles'), { body: { name: 'reactor', scope: 'global', permissions: ['message:react'] } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/dan/roles'), { body: { name: 'reader' } })).status).toBe(201);
    const refused = await react('lobby', id, '👍', 'dan');
    expect([refused.status, refused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect(refused.body.error_description).toContain('message:react');
    const removeRefused = await react('lobby', id, '👍', 'dan', 'DELETE');
    expect([removeRefused.status, removeRefused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect((await s.request('GET', reactions('lobby', id), { token: as('dan') })).status).toBe(200);

    expect((await s.request('PUT', authz('/users/dan/roles'), { body: { name: 'reactor' } })).status).toBe(201);
    expect((await react('lobby', id, '👍', 'dan')).status).toBe(204);
    const listRefused = await s.request('GET', reactions('lobby', id), { token: as('dan') });
    expect([listRefused.status, listRefused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);

    expect((await s.request('DELETE', authz('/users/dan/roles'))).status).toBe(204);
    expect((await s.request('PUT', reactions('lobby', id, '/su'), { token: s.token({ su: true, sub: 'eve' }) })).status).toBe(204);
    const listed = await s.request('GET', reactions('lobby', id), { token: s.token({ su: true }) });
    expect(listed.body.reactions.map((r: { user_id: string }) => r.user_id)).toEqual(['dan', 'eve']);
  });

  it('tells room subscriptions that ask (parley_events=reactions) about reactions live, and nothing new to others', async () => {
    const auth = { authorization: `Bearer ${as('ben')}` };
    const asking = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=0&parley_events=reactions')}`, auth);
    const plain = await openHttpSubscription(`${s.baseUrl}${s.chat('/rooms/lobby?message_limit=0')}`, auth);
    try {
      const id = await send('lobby', 'live');
      for (const sub of [asking, plain]) expect((await sub.nextEvent()).body.data.id).toBe(id);
      expect((await react('lobby', id, '🔥', 'cat')).status).toBe(204);
      expect((await react('lobby', id, '🔥', 'cat', 'DELETE')).status).toBe(204);
      expect((await asking.nextEvent()).body).toEqual({
        event_name: 'reaction_added',
        data: { message_id: id, type: '🔥', user_id: 'cat', created_at: expect.any(String) },
        timestamp: expect.any(String),
      });
      expect((await asking.nextEvent()).body).toMatchObject({ event_name: 'reaction_removed', data: { message_id: id, type: '🔥', user_id: 'cat' } });
      const next = await send('lobby', 'after the reactions');
      expect((await plain.nextEvent()).body).toMatchObject({ event_name: 'new_message', data: { id: next } });
    } finally {
      await Promise.all([asking.close(), plain.close()]);
    }
  });

  it('goes with its message, and the audit trail shows each change under the room', async () => {
    await s.request('POST', s.chat('/rooms'), { body: { id: 'brief', name: 'brief', user_ids: ['ben'] }, token: as('ann') });
    const kept = await send('brief', 'kept');
    const gone = await send('brief', 'gone');
    expect((await react('brief', kept, '👀', 'ben')).status).toBe(204);
    expect((await react('brief', gone, '👀', 'ben')).status).toBe(204);
    expect((await s.request('DELETE', s.chat(`/rooms/brief/messages/${gone}`), { token: as('ann') })).status).toBe(204);
    expect((await s.request('GET', reactions('brief', gone), { token: as('ben') })).status).toBe(404);
    expect((await s.request('GET', reactions('brief', kept), { token: as('ben') })).body.reactions).toHaveLength(1);

    const audit = await s.request('GET', `/services/parley_audit/v1/${s.instanceId}/rooms/brief`, { token: s.token({ su: true }) });
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).toContain('MessageReactionAdded');
  });
});

describe('deleted reactions leave the files', () => {
  let dataDir: string;
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const marker = (what: string) => `${what}${randomBytes(6).toString('hex')}`;
  const files = () => ['read-models.sqlite', 'read-models.sqlite-wal', 'events.sqlite', 'events.sqlite-wal'].map((f) => join(dataDir, f));
  const foundIn = (markers: readonly string[]) => new Set(scanForMarkers({ files: files() }, markers).map((f) => `${f.marker}`));

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-reactions-'));
    s = await startTestServer({ dataDir });
    await s.request('POST', s.chat('/batch_users'), { body: { users: ['ann', 'ben'].map((id) => ({ id, name: id })) } });
    for (const id of ['kept', 'gone']) await s.request('POST', s.chat('/rooms'), { body: { id, name: id, user_ids: ['ben'] }, token: as('ann') });
  });
  afterAll(async () => {
    await s?.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('seals reaction types in the log; a message delete and a room delete remove them from the read models', async () => {
    const send = async (room: string) =>
      (await s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content: 'x' }] }, token: as('ann') })).body.message_id as number;
    const m = { kept: marker('keep'), ofMessage: marker('msg'), ofRoom: marker('room') };
    const kept = await send('kept');
    const deletedMessage = await send('kept');
    const inDeletedRoom = await send('gone');
    const react = (room: string, id: number, type: string) => s.request('PUT', s.chat(`/rooms/${room}/messages/${id}/reactions/${type}`), { token: as('ben') });
    expect((await react('kept', kept, m.kept)).status).toBe(204);
    expect((await react('kept', deletedMessage, m.ofMessage)).status).toBe(204);
    expect((await react('gone', inDeletedRoom, m.ofRoom)).status).toBe(204);
    expect((await s.request('DELETE', s.chat(`/rooms/kept/messages/${deletedMessage}`), { token: as('ann') })).status).toBe(204);
    expect((await s.request('DELETE', s.chat('/rooms/gone'), { token: s.token({ su: true }) })).status).toBe(204);

    const found = foundIn(Object.values(m));
    expect([found.has(m.kept), found.has(m.ofMessage), found.has(m.ofRoom)]).toEqual([true, false, false]);
    const scanLog = scanForMarkers({ files: files().slice(2) }, [m.kept]);
    expect(scanLog).toEqual([]); // sealed in the log: only the read model shows it
  });

  it("a user's erasure removes their reactions: from the counts, the lists and the files", async () => {
    await s.request('POST', s.chat('/users'), { body: { id: 'cy', name: 'cy' } });
    await s.request('PUT', s.chat('/rooms/kept/users/add'), { body: { user_ids: ['cy'] } });
    const id = (await s.request('POST', s.chat('/rooms/kept/messages'), { body: { parts: [{ type: 'text/plain', content: 'y' }] }, token: as('ann') })).body
      .message_id as number;
    const erased = [marker('era'), marker('erb')];
    for (const type of erased) expect((await s.request('PUT', s.chat(`/rooms/kept/messages/${id}/reactions/${type}`), { token: as('cy') })).status).toBe(204);
    expect((await s.request('PUT', s.chat(`/rooms/kept/messages/${id}/reactions/${erased[0]}`), { token: as('ben') })).status).toBe(204);
    expect(foundIn(erased).size).toBe(2);

    const su = s.token({ su: true });
    const requested = await s.request('POST', `/services/parley_admin/v1/${s.instanceId}/erasures`, { body: { user_id: 'cy' }, token: su });
    expect(requested.status).toBe(202);
    await eventually(
      async () => (await s.request('GET', `/services/parley_admin/v1/${s.instanceId}/erasures/${requested.body.id}`, { token: su })).body.status === 'completed',
      { what: 'the erasure completed' },
    );
    const list = await s.request('GET', s.chat(`/rooms/kept/messages/${id}/reactions`), { token: su });
    expect(list.body.reactions.map((r: { user_id: string; type: string }) => [r.user_id, r.type])).toEqual([['ben', erased[0]]]);
    const [message] = (await s.request('GET', s.chat(`/rooms/kept/messages?initial_id=${id + 1}&limit=1`), { token: su })).body;
    expect(message.reactions.counts).toEqual({ [erased[0]]: 1 });
    expect(message.reactions.latest.map((r: { user_id: string }) => r.user_id)).toEqual(['ben']);
    expect(foundIn([erased[1]]).size).toBe(0);
  });

  it('the instance wipe forgets every reaction and pin', async () => {
    const id = (await s.request('POST', s.chat('/rooms/kept/messages'), { body: { parts: [{ type: 'text/plain', content: 'z' }] }, token: as('ann') })).body
      .message_id as number;
    const type = marker('wipe');
    expect((await s.request('PUT', s.chat(`/rooms/kept/messages/${id}/reactions/${type}`), { token: as('ben') })).status).toBe(204);
    expect((await s.request('PUT', s.chat(`/rooms/kept/messages/${id}/pin`), { token: as('ben') })).status).toBe(204);
    const rowsOf = () => {
      const tables = contentsOf(join(dataDir, 'read-models.sqlite'));
      return ['rm_reactions_v1', 'rm_reaction_summaries_v1', 'rm_pins_v1'].map((name) => (tables[name] ?? []).length);
    };
    expect(rowsOf().every((n) => n > 0)).toBe(true);
    expect((await s.request('DELETE', s.chat('/resources'), { token: s.token({ su: true }) })).status).toBe(204);
    await eventually(() => rowsOf().every((n) => n === 0), { what: 'the wiped instance’s reactions and pins forgotten' });
    expect(foundIn([type]).size).toBe(0);
  });
});

/**
 * A user id deleted and created again names another person (issue 17, item 2): the new user
 * may not edit or delete the messages of the one before, tried with plain user tokens.
 */
import { startTestServer, TestServer } from '../support/test-server';

describe('a reused user id and the messages of the user before', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const text = (content: string) => ({ parts: [{ type: 'text/plain', content }] });
  const contents = async () =>
    (await s.request('GET', s.chat('/rooms/lobby/messages'))).body
      .map((m: { id: number; parts: { content: string }[] }) => [m.id, m.parts[0].content])
      .sort((a: [number], b: [number]) => a[0] - b[0]);

  beforeAll(async () => {
    s = await startTestServer();
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users: [{ id: 'alice', name: 'Alice' }, { id: 'bob', name: 'Bob' }] } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'lobby', name: 'lobby', user_ids: ['bob'] }, token: as('alice') })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('the new user of the id cannot edit or delete the old one’s messages; its own it can', async () => {
    const old = await s.request('POST', s.chat('/rooms/lobby/messages'), { body: text('written by the first alice'), token: as('alice') });
    expect(old.status).toBe(201);
    const oldId = old.body.message_id;

    expect((await s.request('DELETE', s.chat('/users/alice'))).status).toBe(204);
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'alice', name: 'Another Alice' } })).status).toBe(201);
    expect((await s.request('POST', s.chat('/users/alice/rooms/lobby/join'), { token: as('alice') })).status).toBe(200);

    const newAlice = as('alice');
    const edited = await s.request('PUT', s.chat(`/rooms/lobby/messages/${oldId}`), { body: text('rewritten'), token: newAlice });
    expect([edited.status, edited.body.error]).toEqual([403, 'services/chatkit/forbidden/not_message_sender']);
    const editedV2 = await s.request('PUT', s.chat(`/rooms/lobby/messages/${oldId}`, 'v2'), { body: { text: 'rewritten' }, token: newAlice });
    expect(editedV2.status).toBe(403);
    const deleted = await s.request('DELETE', s.chat(`/rooms/lobby/messages/${oldId}`), { token: newAlice });
    expect([deleted.status, deleted.body.error]).toEqual([403, 'services/chatkit/forbidden/not_message_sender']);
    expect(await contents()).toEqual([[oldId, 'written by the first alice']]);

    const own = await s.request('POST', s.chat('/rooms/lobby/messages'), { body: text('mine'), token: newAlice });
    expect((await s.request('PUT', s.chat(`/rooms/lobby/messages/${own.body.message_id}`), { body: text('mine, edited'), token: newAlice })).status).toBe(204);
    expect(await contents()).toEqual([
      [oldId, 'written by the first alice'],
      [own.body.message_id, 'mine, edited'],
    ]);
    expect((await s.request('DELETE', s.chat(`/rooms/lobby/messages/${own.body.message_id}`), { token: newAlice })).status).toBe(204);
    // su still may.
    expect((await s.request('DELETE', s.chat(`/rooms/lobby/messages/${oldId}`))).status).toBe(204);
  });

  it('a deleted sender’s id, not created again, edits nothing', async () => {
    const sent = await s.request('POST', s.chat('/rooms/lobby/messages'), { body: text('from bob'), token: as('bob') });
    expect((await s.request('DELETE', s.chat('/users/bob'))).status).toBe(204);
    const edited = await s.request('PUT', s.chat(`/rooms/lobby/messages/${sent.body.message_id}`), { body: text('x'), token: as('bob') });
    expect(edited.status).toBe(403);
  });
});

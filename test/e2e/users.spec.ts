import { request } from 'node:http';
import { startTestServer, TestServer } from '../support/test-server';

describe('users API (v2 and v6 over one store)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  const createUser = (id: string, extra: Record<string, unknown> = {}, version: 'v2' | 'v6' = 'v6') =>
    s.request('POST', s.chat('/users', version), { body: { id, name: `Name ${id}`, ...extra } });

  it('creates a user and reads it back through both versions', async () => {
    const created = await createUser('alice', { avatar_url: 'https://example.com/a.png', custom_data: { email: 'a@x' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'alice',
      name: 'Name alice',
      avatar_url: 'https://example.com/a.png',
      custom_data: { email: 'a@x' },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: created.body.created_at,
    });
    for (const version of ['v2', 'v6'] as const) {
      const got = await s.request('GET', s.chat('/users/alice', version));
      expect(got.status).toBe(200);
      expect(got.body).toEqual(created.body);
    }
  });

  it('refuses a second user with the same id with the historical error string', async () => {
    await createUser('dup');
    const again = await createUser('dup');
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('services/chatkit/user_already_exists');
    expect(again.body.error_description).toContain('dup');
  });

  it('answers 404 user_not_found for a missing user', async () => {
    const got = await s.request('GET', s.chat('/users/nobody'));
    expect(got.status).toBe(404);
    expect(got.body).toEqual({
      error: 'services/chatkit/not_found/user_not_found',
      error_description: expect.stringContaining('nobody'),
    });
  });

  it('validates the create body with 422 and rejects malformed JSON with 400', async () => {
    const missing = await s.request('POST', s.chat('/users'), { body: { id: 'x' } });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe('services/chatkit/unprocessable_entity/validation_failed');
    expect(missing.body.error_description).toMatch(/name/);
    const badJson = await s.request('POST', s.chat('/users'), {
      rawBody: '{"id": "x",',
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error).toBe('services/chatkit/bad_request/invalid_json_body');
  });

  it('reads JSON bodies with no Content-Type, and empty bodies with application/json', async () => {
    // fetch always adds a Content-Type to a string body; chatkit-server sends none at all.
    const body = JSON.stringify({ id: 'untyped', name: 'U' });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(s.baseUrl + s.chat('/users'), {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token({ su: true })}`, 'content-length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(201);
    const emptyGet = await s.request('GET', s.chat('/users/untyped'), { headers: { 'content-type': 'application/json' } });
    expect(emptyGet.status).toBe(200);
  });

  it('needs su to create and delete users', async () => {
    const userToken = s.token({ sub: 'alice' });
    const create = await s.request('POST', s.chat('/users'), { body: { id: 'y', name: 'Y' }, token: userToken });
    expect(create.status).toBe(403);
    expect(create.body.error).toBe('services/chatkit/forbidden/su_required');
    const del = await s.request('DELETE', s.chat('/users/alice'), { token: userToken });
    expect(del.status).toBe(403);
  });

  it('creates a batch of users and refuses batches over 25 or with an existing id, writing nothing', async () => {
    const users = Array.from({ length: 3 }, (_, i) => ({ id: `batch-${i}`, name: `B${i}` }));
    const ok = await s.request('POST', s.chat('/batch_users'), { body: { users } });
    expect(ok.status).toBe(201);
    expect(ok.body.map((u: { id: string }) => u.id)).toEqual(['batch-0', 'batch-1', 'batch-2']);

    const tooMany = Array.from({ length: 26 }, (_, i) => ({ id: `many-${i}`, name: 'M' }));
    const refused = await s.request('POST', s.chat('/batch_users'), { body: { users: tooMany } });
    expect(refused.status).toBe(422);
    expect(refused.body.error_description).toContain('25');

    const mixed = await s.request('POST', s.chat('/batch_users'), {
      body: { users: [{ id: 'fresh-1', name: 'F' }, { id: 'batch-0', name: 'again' }] },
    });
    expect(mixed.status).toBe(400);
    expect((await s.request('GET', s.chat('/users/fresh-1'))).status).toBe(404);
  });

  it('lists users oldest first from an inclusive from_ts with a limit of 1 to 100', async () => {
    const first = await createUser('list-a');
    await createUser('list-b');
    await createUser('list-c');
    const page = await s.request('GET', s.chat(`/users?from_ts=${encodeURIComponent(first.body.created_at)}&limit=2`));
    expect(page.status).toBe(200);
    expect(page.body.map((u: { id: string }) => u.id)).toEqual(['list-a', 'list-b']);
    const all = await s.request('GET', s.chat('/users', 'v2'));
    const times = all.body.map((u: { created_at: string }) => u.created_at);
    expect([...times].sort()).toEqual(times);
    expect(all.body.length).toBeLessThanOrEqual(20);
    for (const limit of ['0', '101', 'x']) {
      const bad = await s.request('GET', s.chat(`/users?limit=${limit}`));
      expect(bad.status).toBe(422);
    }
    expect((await s.request('GET', s.chat('/users?from_ts=yesterday'))).status).toBe(422);
  });

  it('gets users by repeated id, leaving out unknown ids, and needs at least one id', async () => {
    await createUser('by-1');
    await createUser('by-2');
    const got = await s.request('GET', s.chat('/users_by_ids?id=by-2&id=nobody&id=by-1'));
    expect(got.status).toBe(200);
    expect(got.body.map((u: { id: string }) => u.id)).toEqual(['by-2', 'by-1']);
    expect((await s.request('GET', s.chat('/users_by_ids'))).status).toBe(422);
  });

  it('updates a user (at least one field, self or su) and deletes it', async () => {
    await createUser('upd');
    const empty = await s.request('PUT', s.chat('/users/upd'), { body: {} });
    expect(empty.status).toBe(400);
    const other = await s.request('PUT', s.chat('/users/upd'), { body: { name: 'x' }, token: s.token({ sub: 'alice' }) });
    expect(other.status).toBe(403);
    const self = await s.request('PUT', s.chat('/users/upd', 'v2'), {
      body: { name: 'Renamed', custom_data: { a: 1 } },
      token: s.token({ sub: 'upd' }),
    });
    expect(self.status).toBe(204);
    const got = await s.request('GET', s.chat('/users/upd'));
    expect(got.body).toMatchObject({ name: 'Renamed', custom_data: { a: 1 } });
    expect(got.body.updated_at >= got.body.created_at).toBe(true);
    expect((await s.request('PUT', s.chat('/users/ghost'), { body: { name: 'x' } })).status).toBe(404);

    expect((await s.request('DELETE', s.chat('/users/upd'))).status).toBe(204);
    expect((await s.request('GET', s.chat('/users/upd'))).status).toBe(404);
    expect((await s.request('DELETE', s.chat('/users/upd'))).status).toBe(404);
  });
});

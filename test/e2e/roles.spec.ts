/**
 * The roles and permissions API (chatkit_authorizer v2) over HTTP, and its enforcement on
 * chat, cursor and subscription calls made with user tokens, on a real server (SQLite).
 */
import { startTestServer, TestServer } from '../support/test-server';
import { HttpFrame, openHttpSubscription } from '../support/subscribe-client';

describe('roles and permissions', () => {
  let s: TestServer;
  const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;

  beforeAll(async () => {
    s = await startTestServer();
    for (const id of ['alice', 'bob', 'carol']) {
      expect((await s.request('POST', s.chat('/users'), { body: { id, name: id } })).status).toBe(201);
    }
    for (const id of ['r1', 'r2']) {
      const created = await s.request('POST', s.chat('/rooms'), { body: { id, name: id, user_ids: ['alice', 'bob'] }, token: s.token({ su: true, sub: 'alice' }) });
      expect(created.status).toBe(201);
    }
  });
  afterAll(() => s.close());

  it('every route needs su: 401 without a token, 403 with a user token', async () => {
    const user = s.token({ sub: 'alice' });
    const calls: [string, string, unknown?][] = [
      ['POST', '/roles', { name: 'x', scope: 'global', permissions: [] }],
      ['GET', '/roles'],
      ['DELETE', '/roles/admin/scope/global'],
      ['PUT', '/users/alice/roles', { name: 'admin' }],
      ['GET', '/users/alice/roles'],
      ['DELETE', '/users/alice/roles'],
      ['GET', '/roles/admin/scope/global/permissions'],
      ['PUT', '/roles/admin/scope/global/permissions', { add_permissions: ['room:get'] }],
    ];
    for (const [method, path, body] of calls) {
      const anonymous = await s.request(method, authz(path), { body, token: null });
      expect([method, path, anonymous.status]).toEqual([method, path, 401]);
      const forbidden = await s.request(method, authz(path), { body, token: user });
      expect([method, path, forbidden.status, forbidden.body.error]).toEqual([
        method,
        path,
        403,
        'services/chatkit_authorizer/forbidden/su_required',
      ]);
    }
  });

  it('lists the built-in roles: default lacks room:update and room:delete, admin has them', async () => {
    const { status, body } = await s.request('GET', authz('/roles'));
    expect(status).toBe(200);
    const byName = Object.fromEntries(body.map((r: any) => [r.name, r]));
    expect(byName.default.scope).toBe('global');
    expect(byName.admin.scope).toBe('global');
    expect(byName.default.permissions).toEqual(expect.arrayContaining(['message:create', 'room:join', 'cursors:read:set']));
    expect(byName.default.permissions).not.toContain('room:update');
    expect(byName.default.permissions).not.toContain('room:delete');
    expect(byName.admin.permissions).toEqual(expect.arrayContaining(['room:update', 'room:delete']));
  });

  it('creates roles, refuses duplicates (409), unknown scopes and permissions (422 naming what is allowed), missing fields (400)', async () => {
    expect((await s.request('POST', authz('/roles'), { body: { name: 'mod', scope: 'room', permissions: ['room:update'] } })).status).toBe(201);
    const dup = await s.request('POST', authz('/roles'), { body: { name: 'mod', scope: 'room', permissions: [] } });
    expect([dup.status, dup.body.error]).toEqual([409, 'services/chatkit_authorizer/conflict/role_already_exists']);
    // The same name in the other scope is another role.
    expect((await s.request('POST', authz('/roles'), { body: { name: 'mod', scope: 'global', permissions: ['room:get'] } })).status).toBe(201);
    const scope = await s.request('POST', authz('/roles'), { body: { name: 'x', scope: 'planet', permissions: [] } });
    expect(scope.status).toBe(422);
    expect(scope.body.error_description).toContain('global, room');
    const perm = await s.request('POST', authz('/roles'), { body: { name: 'x', scope: 'global', permissions: ['room:fly'] } });
    expect(perm.status).toBe(422);
    expect(perm.body.error).toBe('services/chatkit_authorizer/unprocessable_entity/invalid_permission');
    expect(perm.body.error_description).toContain('room:fly');
    expect(perm.body.error_description).toContain('room:typing_indicator:create');
    for (const body of [{ scope: 'global', permissions: [] }, { name: 'x', permissions: [] }, { name: 'x', scope: 'global' }, [1], null]) {
      const bad = await s.request('POST', authz('/roles'), { body });
      expect(bad.status).toBeGreaterThanOrEqual(400);
      expect(bad.status).toBeLessThan(500);
      expect(bad.body.error).toEqual(expect.any(String));
    }
    const names = (await s.request('GET', authz('/roles'))).body.map((r: any) => `${r.scope}/${r.name}`);
    expect(names).not.toContain('global/x');
  });

  it('reads and changes permissions: add, remove, at least one list, unknown names, unknown roles', async () => {
    await s.request('POST', authz('/roles'), { body: { name: 'editor', scope: 'global', permissions: ['room:get'] } });
    const read = await s.request('GET', authz('/roles/editor/scope/global/permissions'));
    expect([read.status, read.body]).toEqual([201, ['room:get']]);
    const put = await s.request('PUT', authz('/roles/editor/scope/global/permissions'), {
      body: { add_permissions: ['room:update', 'room:delete'], remove_permissions: ['room:get'] },
    });
    expect(put.status).toBe(204);
    expect((await s.request('GET', authz('/roles/editor/scope/global/permissions'))).body.sort()).toEqual(['room:delete', 'room:update']);
    expect((await s.request('PUT', authz('/roles/editor/scope/global/permissions'), { body: {} })).status).toBe(400);
    expect((await s.request('PUT', authz('/roles/editor/scope/global/permissions'), { body: { add_permissions: [] } })).status).toBe(400);
    expect((await s.request('PUT', authz('/roles/editor/scope/global/permissions'), { body: { add_permissions: ['x:y'] } })).status).toBe(422);
    expect((await s.request('GET', authz('/roles/nobody/scope/global/permissions'))).status).toBe(404);
    expect((await s.request('GET', authz('/roles/editor/scope/room/permissions'))).status).toBe(404);
    expect((await s.request('GET', authz('/roles/editor/scope/planet/permissions'))).status).toBe(422);
  });

  it('assigns and removes user roles; unknown role, user or room is a 404', async () => {
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'nope' } })).status).toBe(404);
    expect((await s.request('PUT', authz('/users/nobody/roles'), { body: { name: 'admin' } })).status).toBe(404);
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'mod', room_id: 'no-room' } })).status).toBe(404);
    // A global role cannot be given for a room, nor a room role globally.
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'admin', room_id: 'r1' } })).status).toBe(404);
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'tmp-room-only' } })).status).toBe(404);
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: {} })).status).toBe(400);

    expect((await s.request('GET', authz('/users/carol/roles'))).body).toEqual([
      { role_name: 'default', permissions: expect.any(Array), scope: 'global' },
    ]);
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'admin' } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'admin' } })).status).toBe(200);
    expect((await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'mod', room_id: 'r1' } })).status).toBe(201);
    expect((await s.request('GET', authz('/users/carol/roles'))).body).toEqual([
      { role_name: 'admin', permissions: expect.arrayContaining(['room:delete']), scope: 'global' },
      { role_name: 'mod', permissions: ['room:update'], scope: 'room', room_id: 'r1' },
    ]);
    expect((await s.request('DELETE', authz('/users/carol/roles?room_id=r1'))).status).toBe(204);
    expect((await s.request('DELETE', authz('/users/carol/roles?room_id=r1'))).status).toBe(404);
    expect((await s.request('DELETE', authz('/users/carol/roles'))).status).toBe(204);
    expect((await s.request('GET', authz('/users/carol/roles'))).body.map((r: any) => r.role_name)).toEqual(['default']);
    expect((await s.request('GET', authz('/users/nobody/roles'))).status).toBe(404);
  });

  it('a default user cannot update or delete a room (403 missing_permission naming it); admin can; the change applies on the next request', async () => {
    const bob = s.token({ sub: 'bob' });
    const update = await s.request('PUT', s.chat('/rooms/r2'), { body: { name: 'renamed' }, token: bob });
    expect(update.status).toBe(403);
    expect(update.body.error).toBe('services/chatkit/forbidden/missing_permission');
    expect(update.body.error_description).toContain('room:update');
    const del = await s.request('DELETE', s.chat('/rooms/r2', 'v2'), { token: bob });
    expect([del.status, del.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect(del.body.error_description).toContain('room:delete');

    expect((await s.request('PUT', authz('/users/bob/roles'), { body: { name: 'admin' } })).status).toBe(201);
    expect((await s.request('PUT', s.chat('/rooms/r2'), { body: { name: 'renamed' }, token: bob })).status).toBe(204);
    expect((await s.request('DELETE', authz('/users/bob/roles'))).status).toBe(204);
    expect((await s.request('PUT', s.chat('/rooms/r2'), { body: { name: 'again' }, token: bob })).status).toBe(403);
  });

  it('a room role grants only in its room', async () => {
    await s.request('POST', authz('/roles'), { body: { name: 'room-admin', scope: 'room', permissions: ['room:update', 'room:delete'] } });
    expect((await s.request('PUT', authz('/users/alice/roles'), { body: { name: 'room-admin', room_id: 'r1' } })).status).toBe(201);
    const alice = s.token({ sub: 'alice' });
    expect((await s.request('PUT', s.chat('/rooms/r1'), { body: { name: 'mine' }, token: alice })).status).toBe(204);
    expect((await s.request('PUT', s.chat('/rooms/r2'), { body: { name: 'not-mine' }, token: alice })).status).toBe(403);
  });

  it('removing a permission from default refuses it to everyone at once: sends, cursors, subscriptions', async () => {
    const alice = s.token({ sub: 'alice' });
    const send = () => s.request('POST', s.chat('/rooms/r1/messages', 'v2'), { body: { text: 'hi' }, token: alice });
    expect((await send()).status).toBe(201);
    await s.request('PUT', authz('/roles/default/scope/global/permissions'), { body: { remove_permissions: ['message:create', 'cursors:read:set'] } });
    const refused = await send();
    expect([refused.status, refused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect(refused.body.error_description).toContain('message:create');
    const cursor = await s.request('PUT', `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0/rooms/r1/users/alice`, { body: { position: 1 }, token: alice });
    expect([cursor.status, cursor.body.error]).toEqual([403, 'services/chatkit_cursors/forbidden/missing_permission']);
    // su is never checked against roles.
    expect((await s.request('POST', s.chat('/rooms/r1/messages', 'v2'), { body: { text: 'su' }, token: s.token({ su: true, sub: 'alice' }) })).status).toBe(201);
    await s.request('PUT', authz('/roles/default/scope/global/permissions'), { body: { add_permissions: ['message:create', 'cursors:read:set'] } });
    expect((await send()).status).toBe(201);
  });

  it('a subscription lacking permission ends before it opens; an open one ends when its grant is revoked', async () => {
    const alice = s.token({ sub: 'alice' });
    await s.request('PUT', authz('/roles/default/scope/global/permissions'), { body: { remove_permissions: ['room:messages:get'] } });
    const headers = { authorization: `Bearer ${alice}` };
    const refused = await openHttpSubscription(s.baseUrl + s.chat('/rooms/r1'), headers);
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toContain('missing_permission');
    await s.request('PUT', authz('/roles/default/scope/global/permissions'), { body: { add_permissions: ['room:messages:get'] } });

    const open = await openHttpSubscription(s.baseUrl + s.chat('/rooms/r1/memberships'), headers);
    expect(open.status).toBe(200);
    await open.nextEvent(); // initial_state
    await s.request('PUT', authz('/roles/default/scope/global/permissions'), { body: { remove_permissions: ['room:get'] } });
    let end: HttpFrame;
    do end = await open.next(); while (end[0] !== 255);
    await open.close();
    expect(end[1]).toBe(403);
    expect(JSON.stringify(end[3])).toContain('room:get');
    await s.request('PUT', authz('/roles/default/scope/global/permissions'), { body: { add_permissions: ['room:get'] } });
  });

  it('deleting a role still assigned removes its assignments; a new role of the same name does not revive them', async () => {
    await s.request('POST', authz('/roles'), { body: { name: 'temp', scope: 'global', permissions: ['room:update', 'room:delete'] } });
    await s.request('PUT', authz('/users/carol/roles'), { body: { name: 'temp' } });
    expect((await s.request('GET', authz('/users/carol/roles'))).body[0].role_name).toBe('temp');
    expect((await s.request('DELETE', authz('/roles/temp/scope/global'))).status).toBe(204);
    expect((await s.request('DELETE', authz('/roles/temp/scope/global'))).status).toBe(404);
    expect((await s.request('DELETE', authz('/roles/temp/scope/planet'))).status).toBe(422);
    expect((await s.request('GET', authz('/users/carol/roles'))).body.map((r: any) => r.role_name)).toEqual(['default']);
    await s.request('POST', authz('/roles'), { body: { name: 'temp', scope: 'global', permissions: ['room:update'] } });
    expect((await s.request('GET', authz('/users/carol/roles'))).body.map((r: any) => r.role_name)).toEqual(['default']);
    expect((await s.request('PUT', s.chat('/rooms/r1'), { body: { name: 'x' }, token: s.token({ sub: 'carol' }) })).status).toBe(403);
  });

  it('a user deleted and created again does not inherit the roles of the one before', async () => {
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'dave', name: 'Dave' } })).status).toBe(201);
    expect((await s.request('PUT', authz('/users/dave/roles'), { body: { name: 'admin' } })).status).toBe(201);
    expect((await s.request('PUT', s.chat('/rooms/r1'), { body: { name: 'by-dave' }, token: s.token({ sub: 'dave' }) })).status).toBe(204);

    expect((await s.request('DELETE', s.chat('/users/dave'))).status).toBe(204);
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'dave', name: 'Another Dave' } })).status).toBe(201);
    expect((await s.request('GET', authz('/users/dave/roles'))).body.map((r: any) => r.role_name)).toEqual(['default']);
    const refused = await s.request('PUT', s.chat('/rooms/r1'), { body: { name: 'by-new-dave' }, token: s.token({ sub: 'dave' }) });
    expect(refused.status).toBe(403);
    // Granting it again works for the new user.
    expect((await s.request('PUT', authz('/users/dave/roles'), { body: { name: 'admin' } })).status).toBe(201);
    expect((await s.request('PUT', s.chat('/rooms/r1'), { body: { name: 'by-new-dave' }, token: s.token({ sub: 'dave' }) })).status).toBe(204);
  });
});

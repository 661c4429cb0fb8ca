/**
 * Roles through the unmodified SDKs: every roles method of `@pusher/chatkit-server` 2.4.0
 * over HTTPS, and `@pusher/chatkit-client` 1.14.1 in jsdom refused room updates and deletes
 * under the `default` role, allowed (hooks firing) once the user is `admin`, and a room role
 * granting only in its own room.
 */
import Chatkit from '@pusher/chatkit-server';
import { ChatkitClients } from '../support/chatkit-client-harness';
import { startTestServer, TestServer } from '../support/test-server';

describe('roles through the SDKs', () => {
  let s: TestServer;
  let chatkit: Chatkit;
  const clients = new ChatkitClients(() => s);
  const errorText = (e: any) =>
    [String(e), e?.message, e?.info?.error, e?.info?.error_description, e?.error, e?.error_description].join(' | ');

  beforeAll(async () => {
    s = await startTestServer({ https: true });
    chatkit = new Chatkit({ instanceLocator: s.locator, key: `${s.keyId}:${s.secret}`, host: 'localhost', port: s.httpsPort });
    await chatkit.createUsers({ users: ['ann', 'ben', 'cat'].map((id) => ({ id, name: id })) });
    for (const id of ['hall', 'den', 'attic']) await chatkit.createRoom({ id, creatorId: 'ann', name: id, userIds: ['ben', 'cat'] });
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    clients.closeAll();
    await s?.close();
  });

  it('chatkit-server: every roles and permissions method', async () => {
    await chatkit.createGlobalRole({ name: 'moderator', permissions: ['room:update', 'message:create'] });
    await chatkit.createRoomRole({ name: 'keeper', permissions: ['room:delete'] });
    await expect(chatkit.createGlobalRole({ name: 'moderator', permissions: [] })).rejects.toMatchObject({ status: 409 });
    await expect(chatkit.createRoomRole({ name: 'bad', permissions: ['room:fly'] })).rejects.toMatchObject({ status: 422 });

    const roles = await chatkit.getRoles();
    expect(roles).toEqual(
      expect.arrayContaining([
        { name: 'default', permissions: expect.any(Array), scope: 'global' },
        { name: 'admin', permissions: expect.any(Array), scope: 'global' },
        { name: 'moderator', permissions: ['room:update', 'message:create'], scope: 'global' },
        { name: 'keeper', permissions: ['room:delete'], scope: 'room' },
      ]),
    );

    expect(await chatkit.getPermissionsForGlobalRole({ name: 'moderator' })).toEqual(['room:update', 'message:create']);
    expect(await chatkit.getPermissionsForRoomRole({ name: 'keeper' })).toEqual(['room:delete']);
    await chatkit.updatePermissionsForGlobalRole({ name: 'moderator', permissionsToAdd: ['room:get'], permissionsToRemove: ['message:create'] });
    expect((await chatkit.getPermissionsForGlobalRole({ name: 'moderator' })).sort()).toEqual(['room:get', 'room:update']);
    await chatkit.updatePermissionsForRoomRole({ name: 'keeper', permissionsToAdd: ['room:update'] });
    expect((await chatkit.getPermissionsForRoomRole({ name: 'keeper' })).sort()).toEqual(['room:delete', 'room:update']);

    await chatkit.assignGlobalRoleToUser({ userId: 'cat', name: 'moderator' });
    await chatkit.assignRoomRoleToUser({ userId: 'cat', name: 'keeper', roomId: 'den' });
    expect(await chatkit.getUserRoles({ userId: 'cat' })).toEqual([
      { role_name: 'moderator', permissions: expect.arrayContaining(['room:update']), scope: 'global' },
      { role_name: 'keeper', permissions: expect.arrayContaining(['room:delete']), scope: 'room', room_id: 'den' },
    ]);
    await expect(chatkit.assignGlobalRoleToUser({ userId: 'nobody', name: 'admin' })).rejects.toMatchObject({ status: 404 });
    await expect(chatkit.assignRoomRoleToUser({ userId: 'cat', name: 'keeper', roomId: 'nowhere' })).rejects.toMatchObject({ status: 404 });

    await chatkit.removeRoomRoleForUser({ userId: 'cat', roomId: 'den' });
    await chatkit.removeGlobalRoleForUser({ userId: 'cat' });
    expect((await chatkit.getUserRoles({ userId: 'cat' })).map((r: any) => r.role_name)).toEqual(['default']);

    await chatkit.deleteGlobalRole({ name: 'moderator' });
    await chatkit.deleteRoomRole({ name: 'keeper' });
    await expect(chatkit.deleteRoomRole({ name: 'keeper' })).rejects.toMatchObject({ status: 404 });
    expect((await chatkit.getRoles()).map((r: any) => r.name).sort()).toEqual(['admin', 'default']);
  });

  it('chatkit-client: a default user is refused updateRoom/deleteRoom; as admin both work and the hooks fire', async () => {
    const ben = await clients.connect('ben');
    const update = await ben.currentUser.updateRoom({ roomId: 'hall', name: 'great-hall' }).catch((e: unknown) => e);
    expect(errorText(update)).toContain('missing_permission');
    expect(errorText(update)).toContain('room:update');
    const del = await ben.currentUser.deleteRoom({ roomId: 'hall' }).catch((e: unknown) => e);
    expect(errorText(del)).toContain('missing_permission');
    expect(errorText(del)).toContain('room:delete');
    expect((await chatkit.getRoom({ roomId: 'hall' })).name).toBe('hall');

    await chatkit.assignGlobalRoleToUser({ userId: 'ben', name: 'admin' });
    await ben.currentUser.updateRoom({ roomId: 'hall', name: 'great-hall' });
    const [updated] = await ben.hooks.waitFor('onRoomUpdated', (room: any) => room.id === 'hall' && room.name === 'great-hall');
    expect(updated.name).toBe('great-hall');
    await ben.currentUser.deleteRoom({ roomId: 'hall' });
    await ben.hooks.waitFor('onRoomDeleted', (room: any) => room.id === 'hall');
    await expect(chatkit.getRoom({ roomId: 'hall' })).rejects.toMatchObject({ status: 404 });
  });

  it('chatkit-client: a room role grants only in its room', async () => {
    await chatkit.createRoomRole({ name: 'owner', permissions: ['room:update', 'room:delete'] });
    await chatkit.assignRoomRoleToUser({ userId: 'cat', name: 'owner', roomId: 'den' });
    const cat = await clients.connect('cat');
    await cat.currentUser.updateRoom({ roomId: 'den', name: 'cosy-den' });
    await cat.hooks.waitFor('onRoomUpdated', (room: any) => room.id === 'den' && room.name === 'cosy-den');
    const elsewhere = await cat.currentUser.updateRoom({ roomId: 'attic', name: 'loft' }).catch((e: unknown) => e);
    expect(errorText(elsewhere)).toContain('missing_permission');
    expect((await chatkit.getRoom({ roomId: 'attic' })).name).toBe('attic');
  });
});

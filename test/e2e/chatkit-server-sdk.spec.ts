/**
 * Drives the unmodified `@pusher/chatkit-server` 2.4.0 (over `@pusher/platform-node` 0.15.5 and
 * `request` with a keep-alive agent) against a real Parley server on HTTPS: every users, rooms
 * and membership method, the error strings the SDK's own suite asserts, and `authenticate`.
 * The certificate is trusted through NODE_EXTRA_CA_CERTS (set by `npm test`).
 */
import Chatkit, { ErrorResponse } from '@pusher/chatkit-server';
import jwt from 'jsonwebtoken';
import { startTestServer, TestServer } from '../support/test-server';
import { sleep } from '../support/waiting';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const ids = (list: Array<{ id: string }>) => list.map((x) => x.id);
const sorted = (list: string[]) => [...list].sort();

describe('@pusher/chatkit-server 2.4.0 over HTTPS', () => {
  let s: TestServer;
  let chatkit: Chatkit;

  /** `host` must be a bare hostname and the port a separate number (wire-compat §1). */
  const newClient = () =>
    new Chatkit({ instanceLocator: s.locator, key: `${s.keyId}:${s.secret}`, host: 'localhost', port: s.httpsPort });

  /** Creates users straight through the SDK; used for fixtures the test is not about. */
  const users = async (...userIds: string[]) => {
    await chatkit.createUsers({ users: userIds.map((id) => ({ id, name: id.toUpperCase() })) });
  };

  beforeAll(async () => {
    s = await startTestServer({ https: true });
    expect(s.httpsPort).toEqual(expect.any(Number));
    chatkit = newClient();
  });

  // s.close() force-closes every connection, so the SDK's keep-alive (`forever`) sockets end
  // with it and nothing is left to keep jest alive.
  afterAll(() => s.close());

  describe('users', () => {
    it('createUser sends avatarURL and customData and resolves with the created user', async () => {
      const user = await chatkit.createUser({
        id: 'alice',
        name: 'Alice A',
        avatarURL: 'https://example.com/alice.png',
        customData: { email: 'alice@example.com', tags: ['a', 1] },
      });
      expect(user).toEqual({
        id: 'alice',
        name: 'Alice A',
        avatar_url: 'https://example.com/alice.png',
        custom_data: { email: 'alice@example.com', tags: ['a', 1] },
        created_at: expect.stringMatching(ISO_MS),
        updated_at: user.created_at,
      });

      const minimal = await chatkit.createUser({ id: 'bob', name: 'Bob' });
      expect(minimal).toEqual({
        id: 'bob',
        name: 'Bob',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: minimal.created_at,
      });
    });

    it('createUser of an existing id rejects with 400 services/chatkit/user_already_exists', async () => {
      await chatkit.createUser({ id: 'dup', name: 'Dup' });
      const err = await chatkit.createUser({ id: 'dup', name: 'Again' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ErrorResponse);
      expect(err).toMatchObject({
        status: 400,
        error: 'services/chatkit/user_already_exists',
        error_description: expect.any(String),
      });
      expect((await chatkit.getUser({ id: 'dup' })).name).toBe('Dup');
    });

    it('createUsers creates a batch and resolves with the users in order', async () => {
      const created = await chatkit.createUsers({
        users: [
          { id: 'batch-1', name: 'One', avatarURL: 'https://example.com/1.png' },
          { id: 'batch-2', name: 'Two', customData: { n: 2 } },
        ],
      });
      expect(created).toEqual([
        {
          id: 'batch-1',
          name: 'One',
          avatar_url: 'https://example.com/1.png',
          created_at: expect.stringMatching(ISO_MS),
          updated_at: expect.stringMatching(ISO_MS),
        },
        {
          id: 'batch-2',
          name: 'Two',
          custom_data: { n: 2 },
          created_at: expect.stringMatching(ISO_MS),
          updated_at: expect.stringMatching(ISO_MS),
        },
      ]);
      expect(await chatkit.getUsersById({ userIds: ['batch-1', 'batch-2'] })).toEqual(created);
    });

    it('getUser resolves with the stored user', async () => {
      const got = await chatkit.getUser({ id: 'alice' });
      expect(got).toEqual({
        id: 'alice',
        name: 'Alice A',
        avatar_url: 'https://example.com/alice.png',
        custom_data: { email: 'alice@example.com', tags: ['a', 1] },
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
    });

    it('getUser of a missing user rejects with 404 services/chatkit/not_found/user_not_found', async () => {
      const err = await chatkit.getUser({ id: 'nobody' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ErrorResponse);
      expect(err).toMatchObject({ status: 404, error: 'services/chatkit/not_found/user_not_found' });
    });

    it('getUsers lists oldest first, honours limit, and treats fromTimestamp (from_ts) as inclusive', async () => {
      const made = [];
      for (const id of ['ts-a', 'ts-b', 'ts-c']) {
        await sleep(5); // distinct created_at milliseconds
        made.push(await chatkit.createUser({ id, name: id }));
      }
      const [a, b, c] = made;
      expect(a.created_at < b.created_at && b.created_at < c.created_at).toBe(true);

      // No options: no query string at all, the server's default page.
      const all = await chatkit.getUsers();
      expect(all.length).toBeGreaterThanOrEqual(made.length);
      const times = all.map((u: { created_at: string }) => u.created_at);
      expect(sorted(times)).toEqual(times);

      const firstTwo = await chatkit.getUsers({ limit: 2 });
      expect(firstTwo).toEqual(all.slice(0, 2));

      const fromB = await chatkit.getUsers({ fromTimestamp: b.created_at });
      expect(ids(fromB)).toEqual(['ts-b', 'ts-c']);
      expect(fromB[0]).toEqual(b);

      const fromALimited = await chatkit.getUsers({ fromTimestamp: a.created_at, limit: 2 });
      expect(ids(fromALimited)).toEqual(['ts-a', 'ts-b']);

      const later = new Date(Date.parse(c.created_at) + 1).toISOString();
      expect(await chatkit.getUsers({ fromTimestamp: later })).toEqual([]);
    });

    it('getUsersById sends repeated id keys and leaves out unknown ids', async () => {
      const got = await chatkit.getUsersById({ userIds: ['bob', 'nobody', 'alice'] });
      expect(sorted(ids(got))).toEqual(['alice', 'bob']);
      expect(got.find((u: { id: string }) => u.id === 'bob')).toEqual({
        id: 'bob',
        name: 'Bob',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(ids(await chatkit.getUsersById({ userIds: ['alice'] }))).toEqual(['alice']);
    });

    it('updateUser changes name, avatarURL and customData, and the next getUser shows them', async () => {
      await chatkit.createUser({ id: 'upd', name: 'Before' });
      const before = await chatkit.getUser({ id: 'upd' });
      await sleep(5);
      const result = await chatkit.updateUser({
        id: 'upd',
        name: 'After',
        avatarURL: 'https://example.com/after.png',
        customData: { edited: true },
      });
      expect(result).toBeUndefined();
      const after = await chatkit.getUser({ id: 'upd' });
      expect(after).toEqual({
        id: 'upd',
        name: 'After',
        avatar_url: 'https://example.com/after.png',
        custom_data: { edited: true },
        created_at: before.created_at,
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(after.updated_at > before.updated_at).toBe(true);

      // Only the truthy fields are sent: a name-only update keeps the rest.
      await chatkit.updateUser({ id: 'upd', name: 'Again' });
      expect(await chatkit.getUser({ id: 'upd' })).toMatchObject({
        name: 'Again',
        avatar_url: 'https://example.com/after.png',
        custom_data: { edited: true },
      });

      await expect(chatkit.updateUser({ id: 'ghost', name: 'x' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/user_not_found',
      });
    });

    it('deleteUser removes the user (getUser then rejects with user_not_found)', async () => {
      await chatkit.createUser({ id: 'doomed', name: 'Doomed' });
      expect(await chatkit.deleteUser({ userId: 'doomed' })).toBeUndefined();
      await expect(chatkit.getUser({ id: 'doomed' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/user_not_found',
      });
      expect(await chatkit.getUsersById({ userIds: ['doomed'] })).toEqual([]);
      await expect(chatkit.deleteUser({ userId: 'doomed' })).rejects.toMatchObject({ status: 404 });
    });

    it('ids with reserved characters survive the mixed escaping (getUser encodes, updateUser/deleteUser do not)', async () => {
      const id = 'mail+tag@example.com';
      await chatkit.createUser({ id, name: 'Mail' });
      expect((await chatkit.getUser({ id })).id).toBe(id);
      await chatkit.updateUser({ id, name: 'Mailed' });
      expect((await chatkit.getUser({ id })).name).toBe('Mailed');
      expect(await chatkit.getUserRooms({ userId: id })).toEqual([]);
      await chatkit.deleteUser({ userId: id });
      await expect(chatkit.getUser({ id })).rejects.toMatchObject({ status: 404 });
    });
  });

  describe('authenticate', () => {
    it('returns 200 with a bearer token for the user that the server accepts', async () => {
      const auth = chatkit.authenticate({ userId: 'alice' });
      expect(auth).toEqual({
        status: 200,
        headers: {},
        body: { access_token: expect.any(String), expires_in: 86400, token_type: 'bearer' },
      });
      const token: string = (auth.body as { access_token: string }).access_token;
      expect(jwt.decode(token)).toMatchObject({
        instance: s.instanceId,
        iss: `api_keys/${s.keyId}`,
        sub: 'alice',
      });

      const base = `https://localhost:${s.httpsPort}/services/chatkit/v6/${s.instanceId}`;
      const get = (path: string, bearer: string) => fetch(base + path, { headers: { authorization: `Bearer ${bearer}` } });

      const me = await get('/users/alice', token);
      expect(me.status).toBe(200);
      expect(await me.json()).toMatchObject({ id: 'alice', name: 'Alice A' });

      // The token acts as alice (sub), not as a superuser.
      expect((await get('/users/alice/rooms', token)).status).toBe(200);
      const other = await get('/users/bob/rooms', token);
      expect(other.status).toBe(403);

      // And the server does check the signature.
      const [header, payload] = token.split('.');
      const forged = await get('/users/alice', `${header}.${payload}.AAAA`);
      expect(forged.status).toBe(401);
      expect((await forged.json()).error).toBe('services/chatkit/unauthorized/invalid_token');
    });
  });

  describe('rooms', () => {
    beforeAll(async () => {
      await users('ann', 'ben', 'cat', 'dan');
    });

    it('createRoom with creatorId, name, isPrivate, userIds, customData and a chosen id', async () => {
      const room = await chatkit.createRoom({
        id: 'team-room',
        creatorId: 'ann',
        name: 'team',
        isPrivate: true,
        userIds: ['ben', 'cat'],
        customData: { topic: 'planning' },
        pushNotificationTitleOverride: 'Team!',
      });
      expect(room).toEqual({
        id: 'team-room',
        created_by_id: 'ann',
        name: 'team',
        private: true,
        custom_data: { topic: 'planning' },
        push_notification_title_override: 'Team!',
        member_user_ids: expect.any(Array),
        created_at: expect.stringMatching(ISO_MS),
        updated_at: room.created_at,
      });
      expect(sorted(room.member_user_ids)).toEqual(['ann', 'ben', 'cat']);
    });

    it('createRoom with only creatorId and name makes a public room with a UUID and the creator as member', async () => {
      const room = await chatkit.createRoom({ creatorId: 'ben', name: 'lobby' });
      expect(room).toEqual({
        id: expect.stringMatching(UUID),
        created_by_id: 'ben',
        name: 'lobby',
        private: false,
        member_user_ids: ['ben'],
        created_at: expect.stringMatching(ISO_MS),
        updated_at: room.created_at,
      });
    });

    it('createRoom works as the first call of a fresh client, which sends no Content-Type', async () => {
      const fresh = newClient();
      const room = await fresh.createRoom({ id: 'untyped', creatorId: 'cat', name: 'untyped', customData: { a: 1 } });
      expect(room).toMatchObject({ id: 'untyped', created_by_id: 'cat', custom_data: { a: 1 }, member_user_ids: ['cat'] });
    });

    it("createRoom and updateRoom take free-text names up to 60 characters, as apps name rooms (`Alice's room`)", async () => {
      const room = await chatkit.createRoom({ creatorId: 'ann', name: "Alice's room" });
      expect(room.name).toBe("Alice's room");
      await chatkit.updateRoom({ id: room.id, name: "Bob's renamed room 🎉" });
      expect((await chatkit.getRoom({ roomId: room.id })).name).toBe("Bob's renamed room 🎉");
      // Chatkit's limit is 60 characters (an emoji counts as one).
      await chatkit.updateRoom({ id: room.id, name: '🎉'.repeat(60) });
      expect((await chatkit.getRoom({ roomId: room.id })).name).toBe('🎉'.repeat(60));
      await expect(chatkit.updateRoom({ id: room.id, name: 'x'.repeat(61) })).rejects.toMatchObject({
        status: 422,
        error: 'services/chatkit/unprocessable_entity/validation_failed',
      });
      await chatkit.deleteRoom({ id: room.id }); // the listings below count the rooms of this file
    });

    it('createRoom rejects an existing id, an unknown member and a name over 60 characters', async () => {
      await expect(chatkit.createRoom({ id: 'team-room', creatorId: 'ann', name: 'again' })).rejects.toMatchObject({
        status: 400,
        error: 'services/chatkit/bad_request/room_already_exists',
      });
      await expect(chatkit.createRoom({ creatorId: 'ann', name: 'ghosts', userIds: ['ghost'] })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/user_not_found',
      });
      await expect(chatkit.createRoom({ creatorId: 'ann', name: 'n'.repeat(61) })).rejects.toMatchObject({ status: 422 });
    });

    it('getRoom resolves with the room and its members', async () => {
      const room = await chatkit.getRoom({ roomId: 'team-room' });
      expect(room).toMatchObject({
        id: 'team-room',
        created_by_id: 'ann',
        name: 'team',
        private: true,
        custom_data: { topic: 'planning' },
        push_notification_title_override: 'Team!',
      });
      expect(sorted(room.member_user_ids)).toEqual(['ann', 'ben', 'cat']);
    });

    it('getRoom of a missing room rejects with 404 services/chatkit/not_found/room_not_found', async () => {
      const err = await chatkit.getRoom({ roomId: 'no-such-room' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ErrorResponse);
      expect(err).toMatchObject({ status: 404, error: 'services/chatkit/not_found/room_not_found' });
    });

    it('getRooms lists public rooms by id, private ones with includePrivate, after fromId', async () => {
      await chatkit.createRoom({ id: 'list-1', creatorId: 'dan', name: 'list-1' });
      await chatkit.createRoom({ id: 'list-2', creatorId: 'dan', name: 'list-2', isPrivate: true });
      await chatkit.createRoom({ id: 'list-3', creatorId: 'dan', name: 'list-3' });

      const publicRooms = await chatkit.getRooms();
      const publicIds = ids(publicRooms);
      expect(sorted(publicIds)).toEqual(publicIds);
      expect(publicIds).toEqual(expect.arrayContaining(['list-1', 'list-3', 'untyped']));
      expect(publicIds).not.toContain('list-2');
      expect(publicIds).not.toContain('team-room');
      expect(publicRooms.every((r: { private: boolean }) => r.private === false)).toBe(true);
      expect(publicRooms.find((r: { id: string }) => r.id === 'list-1')).toMatchObject({
        created_by_id: 'dan',
        name: 'list-1',
        member_user_ids: ['dan'],
      });

      expect(ids(await chatkit.getRooms({ includePrivate: false }))).toEqual(publicIds);

      const everything = ids(await chatkit.getRooms({ includePrivate: true }));
      expect(sorted(everything)).toEqual(everything);
      expect(everything).toEqual(expect.arrayContaining(['list-1', 'list-2', 'list-3', 'team-room', 'untyped']));

      expect(ids(await chatkit.getRooms({ fromId: 'list-1' }))).toEqual(publicIds.filter((id) => id > 'list-1'));
      expect(ids(await chatkit.getRooms({ fromId: 'list-1', includePrivate: true }))).toEqual(
        everything.filter((id) => id > 'list-1'),
      );
    });

    it("getUserRooms lists the rooms the user is a member of, with their members", async () => {
      const rooms = await chatkit.getUserRooms({ userId: 'ben' });
      const lobby = rooms.find((r: { name: string }) => r.name === 'lobby');
      expect(sorted(ids(rooms))).toEqual(sorted(['team-room', lobby.id]));
      const team = rooms.find((r: { id: string }) => r.id === 'team-room');
      expect(team).toMatchObject({ name: 'team', private: true, created_by_id: 'ann' });
      expect(sorted(team.member_user_ids)).toEqual(['ann', 'ben', 'cat']);
      expect(await chatkit.getUserRooms({ userId: 'dan' })).toEqual(
        expect.arrayContaining(['list-1', 'list-2', 'list-3'].map((id) => expect.objectContaining({ id }))),
      );
      await expect(chatkit.getUserRooms({ userId: 'ghost' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/user_not_found',
      });
    });

    it('getUserRooms rooms carry unread_count (v6 rooms of a user, wire-compat §2.2)', async () => {
      const rooms = await chatkit.getUserRooms({ userId: 'ben' });
      expect(rooms.length).toBeGreaterThan(0);
      for (const room of rooms) expect(room).toHaveProperty('unread_count', 0);
    });

    it('getUserJoinableRooms lists the public rooms the user is not in', async () => {
      const joinable = ids(await chatkit.getUserJoinableRooms({ userId: 'ben' }));
      expect(sorted(joinable)).toEqual(['list-1', 'list-3', 'untyped']);
      const forDan = ids(await chatkit.getUserJoinableRooms({ userId: 'dan' }));
      expect(forDan).toContain('untyped');
      expect(forDan).not.toContain('team-room'); // private
      expect(forDan).not.toContain('list-1'); // already a member
    });

    it('updateRoom changes name, privacy, customData and the push title, seen by the next getRoom', async () => {
      const before = await chatkit.getRoom({ roomId: 'list-1' });
      await sleep(5);
      const result = await chatkit.updateRoom({
        id: 'list-1',
        name: 'renamed',
        isPrivate: true,
        customData: { v: 2 },
        pushNotificationTitleOverride: 'Renamed!',
      });
      expect(result).toBeUndefined();
      const after = await chatkit.getRoom({ roomId: 'list-1' });
      expect(after).toEqual({
        id: 'list-1',
        created_by_id: 'dan',
        name: 'renamed',
        private: true,
        custom_data: { v: 2 },
        push_notification_title_override: 'Renamed!',
        member_user_ids: ['dan'],
        created_at: before.created_at,
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(after.updated_at > before.updated_at).toBe(true);
      expect(ids(await chatkit.getRooms())).not.toContain('list-1');

      // isPrivate:false is sent (only null/undefined are left out) and makes it public again.
      await chatkit.updateRoom({ id: 'list-1', isPrivate: false });
      expect(await chatkit.getRoom({ roomId: 'list-1' })).toMatchObject({ name: 'renamed', private: false, custom_data: { v: 2 } });

      await expect(chatkit.updateRoom({ id: 'no-such-room', name: 'x' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/room_not_found',
      });
    });

    it('addUsersToRoom and removeUsersFromRoom change the members', async () => {
      expect(await chatkit.addUsersToRoom({ roomId: 'list-3', userIds: ['ann', 'ben'] })).toBeUndefined();
      expect(sorted((await chatkit.getRoom({ roomId: 'list-3' })).member_user_ids)).toEqual(['ann', 'ben', 'dan']);
      expect(ids(await chatkit.getUserRooms({ userId: 'ann' }))).toContain('list-3');
      expect(ids(await chatkit.getUserJoinableRooms({ userId: 'ann' }))).not.toContain('list-3');

      expect(await chatkit.removeUsersFromRoom({ roomId: 'list-3', userIds: ['ann', 'dan'] })).toBeUndefined();
      expect((await chatkit.getRoom({ roomId: 'list-3' })).member_user_ids).toEqual(['ben']);
      expect(ids(await chatkit.getUserRooms({ userId: 'ann' }))).not.toContain('list-3');

      // Removing everyone, the creator included, leaves an empty room (the SDK suite's case).
      await chatkit.removeUsersFromRoom({ roomId: 'list-3', userIds: ['ben'] });
      expect(await chatkit.getRoom({ roomId: 'list-3' })).toMatchObject({ created_by_id: 'dan', member_user_ids: [] });

      await expect(chatkit.addUsersToRoom({ roomId: 'list-3', userIds: ['ghost'] })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/user_not_found',
      });
      await expect(chatkit.addUsersToRoom({ roomId: 'no-such-room', userIds: ['ann'] })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/room_not_found',
      });
    });

    it('deleteRoom removes the room from getRoom, getRooms and getUserRooms', async () => {
      expect(await chatkit.deleteRoom({ id: 'untyped' })).toBeUndefined();
      await expect(chatkit.getRoom({ roomId: 'untyped' })).rejects.toMatchObject({
        status: 404,
        error: 'services/chatkit/not_found/room_not_found',
      });
      expect(ids(await chatkit.getRooms({ includePrivate: true }))).not.toContain('untyped');
      expect(ids(await chatkit.getUserRooms({ userId: 'cat' }))).not.toContain('untyped');
      await expect(chatkit.deleteRoom({ id: 'untyped' })).rejects.toMatchObject({ status: 404 });
    });

    it('deleteUser drops the user from the rooms they were in', async () => {
      await users('eve');
      await chatkit.addUsersToRoom({ roomId: 'team-room', userIds: ['eve'] });
      expect((await chatkit.getRoom({ roomId: 'team-room' })).member_user_ids).toContain('eve');
      await chatkit.deleteUser({ userId: 'eve' });
      expect((await chatkit.getRoom({ roomId: 'team-room' })).member_user_ids).not.toContain('eve');
    });
  });
});

import { ChatkitClients, ChatkitSession, HookRecorder, ROOM_HOOKS } from '../support/chatkit-client-harness';
import { sleep } from '../support/waiting';
import { startTestServer, TestServer } from '../support/test-server';

/**
 * The unmodified @pusher/chatkit-client 1.14.1 browser bundle, with a BaseClient from
 * @pusher/platform 0.18.0, each user in a jsdom window on the server's own HTTPS origin
 * (see test/support/chatkit-client-harness.ts for how the window is built and torn down).
 * Users and rooms are set up through the HTTP API with su tokens, as the other e2e files do.
 */
describe('chatkit-client 1.14.1 (jsdom) against the server', () => {
  let s: TestServer;
  const clients = new ChatkitClients(() => s);
  const as = (sub: string, su = false) => s.token({ sub, su });
  const cursorsPath = (path: string) => `/services/chatkit_cursors/v2/${s.instanceId}${path}`;
  /** Sends a v2 text message over HTTP as `user`; returns its id. */
  const send = async (room: string, text: string, user: string) => {
    const res = await s.request('POST', s.chat(`/rooms/${room}/messages`, 'v2'), { body: { text }, token: as(user) });
    if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
    return res.body.message_id as number;
  };
  const createRoom = async (id: string, creator: string, userIds: string[]) => {
    const res = await s.request('POST', s.chat('/rooms'), { body: { id, name: `${id}-room`, user_ids: userIds }, token: as(creator) });
    if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
  };
  /** Subscribes `session` to a room (v6 multipart unless `v2`), recording the room hooks. */
  const subscribe = async (session: ChatkitSession, roomId: string, options: { messageLimit?: number; v2?: boolean } = {}) => {
    const hooks = new HookRecorder();
    const method = options.v2 ? 'subscribeToRoom' : 'subscribeToRoomMultipart';
    // v2 room subscriptions have no onMessageDeleted hook (the client warns if given one).
    const names = options.v2 ? ROOM_HOOKS.filter((h) => h !== 'onMessageDeleted') : ROOM_HOOKS;
    const room = await session.currentUser[method]({ roomId, messageLimit: options.messageLimit ?? 0, hooks: hooks.hooks(...names) });
    return { room, hooks };
  };
  const textOf = (message: any) => message.parts.map((p: any) => p.payload.content).join('');
  const errorText = (e: any) =>
    [String(e), e?.message, e?.info?.error, e?.info?.error_description, typeof e?.info === 'string' ? e.info : ''].join(' | ');

  beforeAll(async () => {
    s = await startTestServer({ https: true });
    const users = ['alice', 'bob', 'carol', 'dan', 'erin'].map((id) => ({ id, name: id[0].toUpperCase() + id.slice(1) }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
  });
  // Sessions first (disconnect, then window.close()), so no socket is left to reconnect to a stopped server.
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    clients.closeAll();
    await s?.close();
  });

  it('connect() resolves with the CurrentUser, its rooms and read cursors', async () => {
    await createRoom('erin-chat', 'bob', ['bob', 'erin']);
    await createRoom('erin-notes', 'erin', []);
    const ids = [await send('erin-chat', 'one', 'bob'), await send('erin-chat', 'two', 'bob'), await send('erin-chat', 'three', 'bob')];
    const put = await s.request('PUT', cursorsPath('/cursors/0/rooms/erin-chat/users/erin'), { body: { position: ids[1] }, token: as('erin') });
    expect(put.status).toBe(201);

    const erin = await clients.connect('erin');
    const me = erin.currentUser;
    expect(me.id).toBe('erin');
    expect(me.name).toBe('Erin');
    const rooms = [...me.rooms].sort((a: any, b: any) => a.id.localeCompare(b.id));
    expect(rooms.map((r: any) => [r.id, r.name, r.createdByUserId, r.isPrivate])).toEqual([
      ['erin-chat', 'erin-chat-room', 'bob', false],
      ['erin-notes', 'erin-notes-room', 'erin', false],
    ]);
    expect(rooms[0].unreadCount).toBe(1);
    expect(rooms[0].lastMessageAt).toEqual(expect.any(String));
    expect(rooms[1].unreadCount).toBe(0);
    const cursor = me.readCursor({ roomId: 'erin-chat' });
    expect(cursor).toMatchObject({ position: ids[1], userId: 'erin', roomId: 'erin-chat', type: 0 });
    expect(me.readCursor({ roomId: 'erin-notes' })).toBeUndefined();
  });

  it('subscribeToRoomMultipart replays the last messageLimit messages in order, then live ones', async () => {
    await createRoom('history', 'bob', ['alice', 'bob']);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send('history', `m${i}`, 'bob'));
    const [alice, bob] = await Promise.all([clients.connect('alice'), clients.connect('bob')]);

    const { room, hooks } = await subscribe(alice, 'history', { messageLimit: 3 });
    expect(room.id).toBe('history');
    const replay = (await hooks.waitForCount('onMessage', 3)).map(([m]) => m);
    expect(replay.map((m) => m.id)).toEqual(ids.slice(2));
    expect(replay.map(textOf)).toEqual(['m2', 'm3', 'm4']);
    expect(replay[0]).toMatchObject({ senderId: 'bob', roomId: 'history', parts: [{ partType: 'inline', payload: { type: 'text/plain', content: 'm2' } }] });
    expect(replay[0].sender.name).toBe('Bob');

    const liveId = await bob.currentUser.sendSimpleMessage({ roomId: 'history', text: 'live from bob' });
    expect(liveId).toEqual(expect.any(Number));
    const all = (await hooks.waitForCount('onMessage', 4)).map(([m]) => m);
    expect(all[3]).toMatchObject({ id: liveId, senderId: 'bob' });
    expect(textOf(all[3])).toBe('live from bob');
    expect(hooks.argsOf('onMessage')).toHaveLength(4);
  });

  it('typing: isTypingIn by one user → onUserStartedTyping, then onUserStoppedTyping on the other', async () => {
    await createRoom('typing', 'alice', ['alice', 'bob']);
    const [alice, bob] = await Promise.all([clients.connect('alice'), clients.connect('bob')]);
    const { hooks } = await subscribe(alice, 'typing');
    await subscribe(bob, 'typing');

    await bob.currentUser.isTypingIn({ roomId: 'typing' });
    const [started] = await hooks.waitFor('onUserStartedTyping');
    const startedAt = Date.now();
    expect(started.id).toBe('bob');
    const [globalStarted] = await alice.hooks.waitFor('onUserStartedTyping');
    expect(globalStarted.id).toBe('typing');
    const [stopped] = await hooks.waitFor('onUserStoppedTyping');
    expect(stopped.id).toBe('bob');
    expect(Date.now() - startedAt).toBeGreaterThan(1_000);
  });

  it('setReadCursor by one user → onNewReadCursor on the other user’s room hooks', async () => {
    await createRoom('cursors', 'alice', ['alice', 'bob']);
    const id = await send('cursors', 'read me', 'alice');
    const [alice, bob] = await Promise.all([clients.connect('alice'), clients.connect('bob')]);
    const { hooks } = await subscribe(alice, 'cursors');

    await bob.currentUser.setReadCursor({ roomId: 'cursors', position: id });
    const [cursor] = await hooks.waitFor('onNewReadCursor');
    expect(cursor).toMatchObject({ position: id, userId: 'bob', roomId: 'cursors', type: 0 });
    expect(cursor.user.id).toBe('bob');
    expect(alice.currentUser.readCursor({ roomId: 'cursors', userId: 'bob' })).toMatchObject({ position: id });
    const stored = await s.request('GET', cursorsPath('/cursors/0/rooms/cursors/users/bob'), { token: as('bob') });
    expect(stored.body).toMatchObject({ position: id, user_id: 'bob', room_id: 'cursors' });
  });

  it('presence: another user connecting → online, disconnecting → offline', async () => {
    await createRoom('presence', 'alice', ['alice', 'carol']);
    const alice = await clients.connect('alice');
    const { hooks } = await subscribe(alice, 'presence');
    const carolChange = (current: string, previous?: string) => (state: any, user: any) =>
      user?.id === 'carol' && state.current === current && (previous === undefined || state.previous === previous);

    const carol = await clients.connect('carol');
    const [online] = await alice.hooks.waitFor('onPresenceChanged', carolChange('online'));
    expect(online.current).toBe('online');
    await hooks.waitFor('onPresenceChanged', carolChange('online'));

    carol.close();
    const [offline] = await alice.hooks.waitFor('onPresenceChanged', carolChange('offline', 'online'));
    expect(offline).toEqual({ current: 'offline', previous: 'online' });
    await hooks.waitFor('onPresenceChanged', carolChange('offline', 'online'));
  });

  it('onUserJoined / onUserLeft when another user joins and leaves the room', async () => {
    await createRoom('members', 'alice', ['alice']);
    const alice = await clients.connect('alice');
    const { room, hooks } = await subscribe(alice, 'members');
    expect(room.userIds).toEqual(['alice']);

    expect((await s.request('POST', s.chat('/users/dan/rooms/members/join'), { token: as('dan') })).status).toBe(200);
    const [joined] = await hooks.waitFor('onUserJoined');
    expect(joined).toMatchObject({ id: 'dan', name: 'Dan' });
    const [joinedRoom, joinedUser] = await alice.hooks.waitFor('onUserJoinedRoom');
    expect([joinedRoom.id, joinedUser.id]).toEqual(['members', 'dan']);
    expect([...room.userIds].sort()).toEqual(['alice', 'dan']);

    expect((await s.request('POST', s.chat('/users/dan/rooms/members/leave'), { token: as('dan') })).status).toBe(200);
    const [left] = await hooks.waitFor('onUserLeft');
    expect(left.id).toBe('dan');
    expect(room.userIds).toEqual(['alice']);
  });

  it('onMessageDeleted when a message is deleted (chatkit-server style DELETE on v6)', async () => {
    await createRoom('deletions', 'alice', ['alice', 'bob']);
    const alice = await clients.connect('alice');
    const { hooks } = await subscribe(alice, 'deletions');
    const id = await send('deletions', 'regrettable', 'bob');
    const [message] = await hooks.waitFor('onMessage');
    expect(message.id).toBe(id);

    expect((await s.request('DELETE', s.chat(`/rooms/deletions/messages/${id}`))).status).toBe(204);
    const [deletedId] = await hooks.waitFor('onMessageDeleted');
    expect(deletedId).toBe(id);
  });

  it("a room where others react, pin, edit and report, by a user who muted someone: the client's hooks fire as before and its fetches read messages carrying reactions", async () => {
    await createRoom('reactions', 'alice', ['alice', 'bob']);
    // Alice muted Carol: her user subscription's initial_state carries muted_user_ids, which the client ignores.
    expect((await s.request('PUT', s.chat('/users/alice/mutes/carol'), { token: as('alice') })).status).toBe(204);
    const alice = await clients.connect('alice');
    expect(alice.currentUser.rooms.map((r: any) => r.id)).toContain('reactions');
    const { hooks } = await subscribe(alice, 'reactions');
    const first = await send('reactions', 'react to this', 'bob');
    expect((await hooks.waitFor('onMessage'))[0].id).toBe(first);

    const reaction = (method: 'PUT' | 'DELETE', type: string) =>
      s.request(method, s.chat(`/rooms/reactions/messages/${first}/reactions/${encodeURIComponent(type)}`), { token: as('bob') });
    expect((await reaction('PUT', '👍')).status).toBe(204);
    expect((await reaction('PUT', ':tada:')).status).toBe(204);
    expect((await reaction('DELETE', ':tada:')).status).toBe(204);
    const pin = (method: 'PUT' | 'DELETE') => s.request(method, s.chat(`/rooms/reactions/messages/${first}/pin`), { token: as('bob') });
    expect((await pin('PUT')).status).toBe(204);
    expect((await pin('DELETE')).status).toBe(204);
    expect((await pin('PUT')).status).toBe(204);
    expect((await s.request('POST', s.chat(`/rooms/reactions/messages/${first}/reports`), { body: { category: 'spam' }, token: as('alice') })).status).toBe(201);
    const edited = await s.request('PUT', s.chat(`/rooms/reactions/messages/${first}`), {
      body: { parts: [{ type: 'text/plain', content: 'edited' }] },
      token: as('bob'),
    });
    expect(edited.status).toBe(204);
    const second = await send('reactions', 'after all that', 'bob');
    const [, [next]] = await hooks.waitForCount('onMessage', 2);
    expect(next.id).toBe(second);
    expect((await s.request('DELETE', s.chat(`/rooms/reactions/messages/${second}`))).status).toBe(204);
    expect((await hooks.waitFor('onMessageDeleted'))[0]).toBe(second);
    // Nothing else reached the room's hooks (presence aside: other tests' users come and go): no extra message, no error.
    expect(hooks.calls.map((c) => c.hook).filter((hook) => hook !== 'onPresenceChanged')).toEqual(['onMessage', 'onMessage', 'onMessageDeleted']);

    const fetched = await alice.currentUser.fetchMultipartMessages({ roomId: 'reactions', limit: 10 });
    expect(fetched.map((m: any) => [m.id, textOf(m)])).toEqual([[first, 'edited']]);
  });

  it("a room where someone replies in a thread: the client's hooks fire as before, for the parent and replies also shown in the room only", async () => {
    await createRoom('threads', 'alice', ['alice', 'bob']);
    const alice = await clients.connect('alice');
    const { hooks } = await subscribe(alice, 'threads');
    const parent = await send('threads', 'start a thread', 'bob');
    expect((await hooks.waitFor('onMessage'))[0].id).toBe(parent);

    const reply = async (content: string, extra: object = {}) => {
      const answer = await s.request('POST', s.chat(`/rooms/threads/messages/${parent}/replies`), {
        body: { parts: [{ type: 'text/plain', content }], ...extra },
        token: as('bob'),
      });
      expect(answer.status).toBe(201);
      return answer.body.message_id as number;
    };
    const hidden = await reply('in the thread only');
    const shown = await reply('in the room too', { also_in_room: true });
    const [, [shownMessage]] = await hooks.waitForCount('onMessage', 2);
    expect([shownMessage.id, textOf(shownMessage)]).toEqual([shown, 'in the room too']);
    expect((await s.request('DELETE', s.chat(`/rooms/threads/messages/${hidden}`), { token: as('bob') })).status).toBe(204);
    const after = await send('threads', 'after the thread', 'bob');
    const [, , [afterMessage]] = await hooks.waitForCount('onMessage', 3);
    expect(afterMessage.id).toBe(after);
    // The thread-only reply and its deletion never reached the room's hooks; no error either.
    expect(hooks.calls.map((c) => c.hook).filter((hook) => hook !== 'onPresenceChanged')).toEqual(['onMessage', 'onMessage', 'onMessage']);

    const fetched = await alice.currentUser.fetchMultipartMessages({ roomId: 'threads', limit: 10 });
    expect(fetched.map((m: any) => [m.id, textOf(m)])).toEqual([
      [parent, 'start a thread'],
      [shown, 'in the room too'],
      [after, 'after the thread'],
    ]);
  });

  it("a room with a shadow-banned sender and a banned member: the sender's client sees its own messages, the bystander's sees nothing of them, the banned client's send fails clearly", async () => {
    await createRoom('moderated', 'alice', ['alice', 'bob', 'carol', 'dan']);
    const ban = (user: string, body: object) => s.request('PUT', s.chat(`/rooms/moderated/bans/${user}`), { body, token: as('alice', true) });
    expect((await ban('bob', { shadow: true, reason: 'spam' })).status).toBe(200);
    const [alice, bob, carol] = await Promise.all([clients.connect('alice'), clients.connect('bob'), clients.connect('carol')]);
    const bystander = await subscribe(alice, 'moderated');
    const sender = await subscribe(bob, 'moderated');

    const hidden = await bob.currentUser.sendSimpleMessage({ roomId: 'moderated', text: 'buy now' });
    expect((await sender.hooks.waitFor('onMessage'))[0].id).toBe(hidden);
    const seen = await send('moderated', 'hello all', 'dan');
    expect((await bystander.hooks.waitFor('onMessage'))[0].id).toBe(seen);
    await sender.hooks.waitForCount('onMessage', 2);
    expect(bystander.hooks.calls.filter((c) => c.hook === 'onMessage').map((c) => c.args[0].id)).toEqual([seen]);
    const fetchedByAlice = await alice.currentUser.fetchMultipartMessages({ roomId: 'moderated', limit: 10 });
    expect(fetchedByAlice.map((m: any) => m.id)).toEqual([seen]);
    const fetchedByBob = await bob.currentUser.fetchMultipartMessages({ roomId: 'moderated', limit: 10 });
    expect(fetchedByBob.map((m: any) => m.id)).toEqual([hidden, seen]);

    expect((await ban('carol', { reason: 'abuse' })).status).toBe(200);
    const refused = await carol.currentUser.sendSimpleMessage({ roomId: 'moderated', text: 'let me in' }).then(
      () => 'sent',
      (e: any) => errorText(e),
    );
    expect(refused).toContain('banned');
    // Nothing else reached the bystander's room hooks (presence aside).
    expect(bystander.hooks.calls.map((c) => c.hook).filter((hook) => hook !== 'onPresenceChanged')).toEqual(['onMessage']);
  });

  it("onMessageDeleted when a message is deleted through chat API v5 (chatkit-client's own suite, deleteMessageV5)", async () => {
    await createRoom('v5-deletions', 'alice', ['alice']);
    const alice = await clients.connect('alice');
    const sentId = await alice.currentUser.sendSimpleMessage({ roomId: 'v5-deletions', text: 'yo2' });
    const { room, hooks } = await subscribe(alice, 'v5-deletions');
    const deleted = await s.request('DELETE', `/services/chatkit/v5/${s.instanceId}/rooms/${room.id}/messages/${sentId}`, {
      token: s.token({ su: true }),
    });
    expect(deleted.status).toBe(204);
    const [deletedId] = await hooks.waitFor('onMessageDeleted');
    expect(deletedId).toBe(sentId);
  });

  it("createRoom and updateRoom with free-text names, as the SDK's own suite names rooms (`Alice's new room`)", async () => {
    const alice = await clients.connect('alice');
    const room = await alice.currentUser.createRoom({ name: "Alice's new room", addUserIds: ['bob'] });
    expect(room.name).toBe("Alice's new room");
    expect(alice.currentUser.rooms.find((r: any) => r.id === room.id)?.name).toBe("Alice's new room");
    // updateRoom needs room:update, which only admin holds (the SDK's suite promotes Alice first).
    const promoted = await s.request('PUT', `/services/chatkit_authorizer/v2/${s.instanceId}/users/alice/roles`, { body: { name: 'admin' } });
    expect(promoted.status).toBe(201);
    try {
      await alice.currentUser.updateRoom({ roomId: room.id, name: "Bob's updated room" });
      const [updated] = await alice.hooks.waitFor('onRoomUpdated', (r: any) => r.id === room.id);
      expect(updated.name).toBe("Bob's updated room");
      expect((await s.request('GET', s.chat(`/rooms/${room.id}`))).body.name).toBe("Bob's updated room");
    } finally {
      expect((await s.request('DELETE', `/services/chatkit_authorizer/v2/${s.instanceId}/users/alice/roles`)).status).toBe(204);
    }
  });

  it('v2: subscribeToRoom + sendMessage round trip', async () => {
    await createRoom('classic', 'alice', ['alice']);
    const before = await send('classic', 'before', 'alice');
    const alice = await clients.connect('alice');
    const { hooks } = await subscribe(alice, 'classic', { v2: true, messageLimit: 1 });
    const [first] = await hooks.waitFor('onMessage');
    expect(first).toMatchObject({ id: before, text: 'before', senderId: 'alice', roomId: 'classic' });
    expect(first.parts).toBeUndefined();

    const id = await alice.currentUser.sendMessage({ roomId: 'classic', text: 'hello v2' });
    expect(id).toEqual(expect.any(Number));
    const [second] = (await hooks.waitForCount('onMessage', 2))[1];
    expect(second).toMatchObject({ id, text: 'hello v2', senderId: 'alice' });
  });

  it('attachment round trip: sendMultipartMessage with a file, receive it, download the exact bytes', async () => {
    await createRoom('files', 'alice', ['alice', 'bob']);
    const [alice, bob] = await Promise.all([clients.connect('alice'), clients.connect('bob')]);
    const { hooks } = await subscribe(bob, 'files');
    const content = JSON.stringify({ hello: 'wörld', n: [1, 2, 3] });
    const { File } = alice.browser.window;
    const file = new File([content], 'data.json', { type: 'application/json' });

    const id = await alice.currentUser.sendMultipartMessage({
      roomId: 'files',
      parts: [{ type: 'application/json', file, customData: { k: 1 } }],
    });
    expect(id).toEqual(expect.any(Number));
    const [message] = await hooks.waitFor('onMessage');
    expect(message).toMatchObject({ id, senderId: 'alice' });
    expect(message.parts).toHaveLength(1);
    const part = message.parts[0];
    expect(part.partType).toBe('attachment');
    expect(part.payload).toMatchObject({ type: 'application/json', name: 'data.json', size: Buffer.byteLength(content), customData: { k: 1 } });

    const url = await part.payload.url();
    expect(url).toEqual(expect.any(String));
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).toString('utf8')).toBe(content);
  });

  describe("v2 and v6 over one timeline, as the SDK's own suite reads them (its link is never fetched)", () => {
    const CAT = 'https://cataas.com/cat';
    const fileOf = (session: ChatkitSession) =>
      new session.browser.window.File([JSON.stringify({ hello: 'world' })], 'file: with spaces.json', { type: 'application/json' });
    const downloaded = async (url: string) => (await fetch(url)).json();

    /** The SDK suite's three sends through v2: text, a link attachment, a data attachment (the files API). */
    const sendThroughV2 = async (session: ChatkitSession, roomId: string, tag: string) => {
      await session.currentUser.sendMessage({ roomId, text: `yo${tag}` });
      await session.currentUser.sendMessage({ roomId, text: `yoo${tag}`, attachment: { link: CAT, type: 'image' } });
      await session.currentUser.sendMessage({ roomId, text: `yooo${tag}`, attachment: { file: fileOf(session), name: 'file: with spaces.json' } });
    };

    it('v2 sends, v2 receives: a link attachment is {link, type, name} named by its last path segment; a data attachment by its file', async () => {
      await createRoom('v2-v2', 'alice', ['alice', 'bob']);
      const alice = await clients.connect('alice');
      const { hooks } = await subscribe(alice, 'v2-v2', { v2: true });
      await sendThroughV2(alice, 'v2-v2', '');
      const [plain, link, data] = (await hooks.waitForCount('onMessage', 3)).map(([m]) => m);
      expect(plain.text).toBe('yo');
      expect(link).toMatchObject({ text: 'yoo', attachment: { link: CAT, type: 'image', name: 'cat' } });
      expect(data).toMatchObject({ text: 'yooo', attachment: { type: 'file', name: 'file: with spaces.json' } });
      expect(await downloaded(data.attachment.link)).toEqual({ hello: 'world' });
    });

    it('v2 sends, v6 receives: image/x-pusher-img and file/x-pusher-file parts, the file with its name, size and bytes', async () => {
      await createRoom('v2-v6', 'alice', ['alice', 'bob']);
      const alice = await clients.connect('alice');
      const { hooks } = await subscribe(alice, 'v2-v6');
      await sendThroughV2(alice, 'v2-v6', '3');
      const [plain, link, data] = (await hooks.waitForCount('onMessage', 3)).map(([m]) => m);
      expect(plain.parts).toEqual([{ partType: 'inline', payload: { type: 'text/plain', content: 'yo3' } }]);
      expect(link.parts).toEqual([
        { partType: 'inline', payload: { type: 'text/plain', content: 'yoo3' } },
        { partType: 'url', payload: { type: 'image/x-pusher-img', url: CAT } },
      ]);
      expect(data.parts).toHaveLength(2);
      expect(data.parts[1].partType).toBe('attachment');
      expect(data.parts[1].payload).toMatchObject({ type: 'file/x-pusher-file', name: 'file: with spaces.json', size: 17 });
      expect(data.parts[1].payload.urlExpiry()).toBeTruthy();
      expect(await downloaded(await data.parts[1].payload.url())).toEqual({ hello: 'world' });

      // fetchMultipartMessages (v6 over HTTP) reads them the same way.
      const fetched = await alice.currentUser.fetchMultipartMessages({ roomId: 'v2-v6', limit: 2 });
      expect(fetched.map((m: any) => m.parts[1].payload.type)).toEqual(['image/x-pusher-img', 'file/x-pusher-file']);
    });

    it('v6 sends, v2 receives: a URL part reads as {type: image, name: cat}, a file part as {type: file, name}', async () => {
      await createRoom('v6-v2', 'alice', ['alice', 'bob']);
      const alice = await clients.connect('alice');
      const { hooks } = await subscribe(alice, 'v6-v2', { v2: true });
      await alice.currentUser.sendSimpleMessage({ roomId: 'v6-v2', text: 'yo2' });
      await alice.currentUser.sendMultipartMessage({
        roomId: 'v6-v2',
        parts: [
          { type: 'text/plain', content: 'yoo2' },
          { type: 'image/cat', url: CAT },
        ],
      });
      await alice.currentUser.sendMultipartMessage({ roomId: 'v6-v2', parts: [{ type: 'text/plain', content: 'yooo2' }, { file: fileOf(alice) }] });
      const [plain, link, data] = (await hooks.waitForCount('onMessage', 3)).map(([m]) => m);
      expect(plain.text).toBe('yo2');
      expect(link).toMatchObject({ text: 'yoo2', attachment: { link: CAT, type: 'image', name: 'cat' } });
      expect(data).toMatchObject({ text: 'yooo2', attachment: { type: 'file', name: 'file: with spaces.json' } });
      expect(await downloaded(data.attachment.link)).toEqual({ hello: 'world' });

      // fetchMessages (v2 over HTTP) reads them the same way.
      const fetched = await alice.currentUser.fetchMessages({ roomId: 'v6-v2', limit: 2 });
      expect(fetched.map((m: any) => [m.attachment.type, m.attachment.name])).toEqual([
        ['image', 'cat'],
        ['file', 'file: with spaces.json'],
      ]);
    });
  });

  it('connecting as a user that does not exist fails with "user does not exist"', async () => {
    const ghost = clients.session('ghost');
    const error = await ghost.connect().then(
      () => undefined,
      (e) => e,
    );
    expect(error).toBeDefined();
    expect(errorText(error)).toContain('user does not exist');
  });

  it('uses one socket per client and opens no more after disconnect() and window.close()', async () => {
    const alice = await clients.connect('alice');
    await subscribe(alice, 'classic');
    expect(alice.browser.socketsOpened).toBe(1);
    alice.close();
    await sleep(300);
    expect(alice.browser.socketsOpened).toBe(1);
  });
});

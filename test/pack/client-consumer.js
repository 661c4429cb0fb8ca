/**
 * Run by test/e2e/client-libraries.spec.ts with `node` inside a temporary project that installed
 * Parley's packed tarball: it uses `parley/chat-server` and `parley/feeds` as an app server would,
 * against the running server in PARLEY_PORT, and prints what it observed as one JSON line.
 */
const { ChatServer, ErrorResponse } = require('parley/chat-server');
const { Feeds, ClientError, UnsupportedGrantTypeError, InvalidGrantTypeError } = require('parley/feeds');
const root = require('parley');

const port = Number(process.env.PARLEY_PORT);
const instance = process.env.PARLEY_INSTANCE;
const options = { instanceLocator: `v1:local:${instance}`, key: process.env.PARLEY_KEY, host: '127.0.0.1', port, tls: false };
const api = (path, token) =>
  fetch(`http://127.0.0.1:${port}/services/${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
const failure = async (promise) => {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return { name: error.name, status: error.status, error: error.error, message: error.message, isErrorResponse: error instanceof ErrorResponse };
  }
};

async function chat() {
  const chat = new ChatServer(options);
  const out = {};
  out.alice = await chat.createUser({ id: 'alice', name: 'Alice', customData: { team: 'blue' } });
  await chat.createUser({ id: 'bob', name: 'Bob' });
  out.gotAlice = await chat.getUser({ id: 'alice' });

  const auth = chat.authenticate({ userId: 'alice' });
  out.auth = { status: auth.status, headers: auth.headers, token_type: auth.body.token_type, expires_in: auth.body.expires_in };
  // The token a client would get from the app's token endpoint is accepted by the chat API.
  const asAlice = await api(`chatkit/v6/${instance}/users/alice`, auth.body.access_token);
  out.withAuthToken = { status: asAlice.status, body: await asAlice.json() };
  const suAuth = chat.authenticate({ userId: 'alice', su: true });
  out.suTokenListsRoles = (await api(`chatkit_authorizer/v2/${instance}/roles`, suAuth.body.access_token)).status;
  out.badGrant = chat.authenticate({ userId: 'alice', authPayload: { grant_type: 'password' } });

  const room = await chat.createRoom({ creatorId: 'alice', name: 'general', userIds: ['bob'], customData: { topic: 'all' } });
  out.room = room;
  out.gotRoom = await chat.getRoom({ roomId: room.id });
  const first = await chat.sendSimpleMessage({ roomId: room.id, userId: 'alice', text: 'hello' });
  const second = await chat.sendMultipartMessage({
    roomId: room.id,
    userId: 'bob',
    parts: [{ type: 'text/plain', content: 'look' }, { type: 'image/png', url: 'https://example.com/cat.png' }],
  });
  out.messageIds = [first.message_id, second.message_id];
  out.messages = await chat.fetchMultipartMessages({ roomId: room.id });
  out.olderThanSecond = await chat.fetchMultipartMessages({ roomId: room.id, initialId: second.message_id, limit: 10 });
  out.searchedAsBob = await chat.searchMessages({ query: 'LOOK', userId: 'bob', hasAttachment: true });
  out.searchedAsSuFirstPage = await chat.searchMessages({ query: 'hello', limit: 1, order: 'relevance' });
  await chat.createUser({ id: 'carol', name: 'Carol' });
  out.searchedOutsider = await chat.searchMessages({ query: 'hello', userId: 'carol' });

  for (const userId of ['alice', 'bob']) await chat.addReaction({ roomId: room.id, messageId: first.message_id, userId, type: '👍' });
  await chat.addReaction({ roomId: room.id, messageId: first.message_id, userId: 'bob', type: '👍' });
  await chat.addReaction({ roomId: room.id, messageId: first.message_id, userId: 'bob', type: ':tada:' });
  await chat.removeReaction({ roomId: room.id, messageId: first.message_id, userId: 'alice', type: '👍' });
  out.reactionsPage = await chat.listReactions({ roomId: room.id, messageId: first.message_id, limit: 1 });
  out.reactionsNextPage = await chat.listReactions({ roomId: room.id, messageId: first.message_id, after: out.reactionsPage.next });
  await chat.pinMessage({ roomId: room.id, messageId: second.message_id, userId: 'bob', until: new Date(Date.now() + 3_600_000) });
  await chat.pinMessage({ roomId: room.id, messageId: first.message_id });
  await chat.unpinMessage({ roomId: room.id, messageId: first.message_id });
  out.pins = await chat.listPins({ roomId: room.id });
  out.reactedMessage = (await chat.fetchMultipartMessages({ roomId: room.id })).find((m) => m.id === first.message_id);
  const threadReply = await chat.replyToMessage({ roomId: room.id, messageId: second.message_id, userId: 'alice', parts: [{ type: 'text/plain', content: 'in the thread' }] });
  await chat.replyToMessage({ roomId: room.id, messageId: second.message_id, userId: 'bob', parts: [{ type: 'text/plain', content: 'in both' }], alsoInRoom: true });
  out.replies = await chat.listReplies({ roomId: room.id, messageId: second.message_id, direction: 'newer' });
  await chat.setThreadCursor({ roomId: room.id, messageId: second.message_id, userId: 'alice', position: threadReply.message_id });
  out.threadCursor = await chat.getThreadCursor({ roomId: room.id, messageId: second.message_id, userId: 'alice' });
  out.aliceThreads = await chat.listUserThreads({ userId: 'alice' });

  const reported = await chat.reportMessage({ roomId: room.id, messageId: second.message_id, reporterId: 'alice', category: 'spam', reason: 'an advert' });
  out.reportedAgain = await chat.reportMessage({ roomId: room.id, messageId: second.message_id, reporterId: 'alice', category: 'spam' });
  const userReport = await chat.reportUser({ userId: 'alice', reporterId: 'bob', category: 'harassment' });
  out.reportQueue = await chat.listReports({ limit: 1 });
  out.reportQueueNext = await chat.listReports({ after: out.reportQueue.next });
  out.resolvedReport = await chat.resolveReport({ reportId: userReport.id, action: 'dismiss', note: 'fine' });
  out.gotReport = await chat.getReport({ reportId: reported.id });
  out.reportedId = reported.id;
  await chat.muteUser({ userId: 'alice', mutedUserId: 'bob' });
  out.mutes = await chat.listMutes({ userId: 'alice' });
  await chat.unmuteUser({ userId: 'alice', mutedUserId: 'bob' });
  out.mutesAfter = await chat.listMutes({ userId: 'alice' });
  out.roomBan = await chat.banUser({ roomId: room.id, userId: 'bob', reason: 'spam', until: new Date(Date.now() + 3_600_000) });
  out.instanceBan = await chat.banUser({ userId: 'alice', shadow: true });
  out.bans = [await chat.listBans({ roomId: room.id }), await chat.listBans()];
  await chat.unbanUser({ roomId: room.id, userId: 'bob' });
  await chat.unbanUser({ userId: 'alice' });
  out.bansAfter = [await chat.listBans({ roomId: room.id }), await chat.listBans()];
  await chat.setRoomFrozen({ roomId: room.id, frozen: true });
  out.frozen = await chat.isRoomFrozen({ roomId: room.id });
  await chat.setRoomFrozen({ roomId: room.id, frozen: false });
  out.frozenAfter = await chat.isRoomFrozen({ roomId: room.id });

  out.missingUser = await failure(chat.getUser({ id: 'nobody' }));
  out.userTokenCannotCreate = await failure(
    fetch(`http://127.0.0.1:${port}/services/chatkit/v6/${instance}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${auth.body.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'mallory', name: 'M' }),
    }).then((r) => (r.ok ? r : Promise.reject(Object.assign(new Error('refused'), { status: r.status })))),
  );
  await chat.deleteUser({ userId: 'bob' });
  out.deletedBob = await failure(chat.getUser({ id: 'bob' }));
  out.wrongKey = await failure(new ChatServer({ ...options, key: 'k:not-the-secret' }).getUser({ id: 'alice' }));
  out.hostWithPort = await failure(Promise.resolve().then(() => new ChatServer({ ...options, host: `127.0.0.1:${port}` })));
  return out;
}

async function feeds() {
  const feeds = new Feeds(options);
  const out = {};
  out.published = await feeds.publish('news', { headline: 'one' });
  out.batch = await feeds.publishBatch('news', [{ headline: 'two' }, { headline: 'three' }, { headline: 'four' }]);
  out.firstPage = await feeds.paginate('news', { limit: 2 });
  out.secondPage = await feeds.paginate('news', { cursor: out.firstPage.next_cursor, limit: 2 });
  out.defaultPage = await feeds.paginate('news');
  await feeds.publish('private-news', { secret: true });
  out.listed = await feeds.list({ prefix: 'priv' });
  await feeds.delete('news');
  out.afterDelete = await feeds.paginate('news');

  // An app's auth endpoint: feeds-client posts {path, action, grant_type} as a form.
  const form = { path: 'feeds/private-news/items', action: 'READ', grant_type: 'client_credentials' };
  const asked = [];
  const granted = await feeds.authorizeFeed(form, (action, feedId) => (asked.push([action, feedId]), true));
  out.asked = asked;
  out.granted = { token_type: granted.token_type, expires_in: granted.expires_in, hasRefresh: typeof granted.refresh_token === 'string' };
  const read = await api(`feeds/v1/${instance}/feeds/private-news/items`, granted.access_token);
  out.readWithGrant = { status: read.status, body: await read.json() };
  out.readOtherFeedWithGrant = (await api(`feeds/v1/${instance}/feeds/private-other/items`, granted.access_token)).status;
  out.readWithoutToken = (await api(`feeds/v1/${instance}/feeds/private-news/items`)).status;
  out.publishWithReadGrant = (
    await fetch(`http://127.0.0.1:${port}/services/feeds/v1/${instance}/feeds/private-news/items`, {
      method: 'POST',
      headers: { authorization: `Bearer ${granted.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ items: ['x'] }),
    })
  ).status;
  const refreshed = await feeds.authorizeFeed({ ...form, grant_type: 'refresh_token', refresh_token: granted.refresh_token }, () => true);
  out.refreshedReads = (await api(`feeds/v1/${instance}/feeds/private-news/items`, refreshed.access_token)).status;

  out.denied = await failure(feeds.authorizeFeed(form, async () => false));
  out.unsupportedGrant = await failure(feeds.authorizeFeed({ ...form, grant_type: 'password' }, () => true));
  out.badRefresh = await failure(feeds.authorizeFeed({ ...form, grant_type: 'refresh_token', refresh_token: 'nonsense' }, () => true));
  out.writeAction = await failure(feeds.authorizeFeed({ ...form, action: '*' }, () => true));
  out.badPath = await failure(feeds.authorizeFeed({ ...form, path: 'firehose/items' }, () => true));
  out.errorClasses = { ClientError: ClientError.name, UnsupportedGrantTypeError: UnsupportedGrantTypeError.name, InvalidGrantTypeError: InvalidGrantTypeError.name };
  out.badFeedId = await failure(feeds.paginate('no spaces'));
  return out;
}

(async () => {
  const result = { rootExports: Object.keys(root).sort(), chat: await chat(), feeds: await feeds() };
  // The client libraries load none of the server's frameworks or drivers.
  result.loadedPackages = [
    ...new Set(Object.keys(require.cache).map((file) => [...file.matchAll(/node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/g)].pop()?.[1]).filter(Boolean)),
  ].sort();
  process.stdout.write(`${JSON.stringify(result)}\n`);
})().catch((error) => {
  process.stderr.write(`${error.stack}\n${JSON.stringify(error)}\n`);
  process.exit(1);
});

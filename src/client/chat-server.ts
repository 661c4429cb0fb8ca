import { ServerOptions, ServiceClient, WriteOptions } from './http';
import { InstanceKey, InstanceLocator, parseInstanceLocator, parseKey } from './instance-locator';
import { signToken, TOKEN_LIFETIME_SECONDS } from './tokens';

export { ErrorResponse } from './errors';
export type { ServerOptions, WriteOptions } from './http';
export type { RetryOptions } from './retries';

export interface ChatServerOptions extends ServerOptions {
  /** `v1:<cluster>:<instanceId>` */
  instanceLocator: string;
  /** `<keyId>:<secret>` */
  key: string;
}

export interface AuthenticateOptions {
  userId: string;
  /** Issue a superuser token (bypasses roles). */
  su?: boolean;
  /** The parsed body of the client's token request; default `{grant_type: "client_credentials"}`. */
  authPayload?: { grant_type?: string; [field: string]: unknown };
  /** Token lifetime in seconds; default a day. */
  tokenExpiry?: number;
}

export type AuthenticationResponse =
  | { status: 200; headers: Record<string, string>; body: { access_token: string; token_type: 'bearer'; expires_in: number } }
  | { status: 422; headers: Record<string, string>; body: { error: string; error_description: string } };

export interface User {
  id: string;
  name: string;
  avatar_url?: string;
  custom_data?: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface Room {
  id: string;
  created_by_id?: string;
  name: string;
  private: boolean;
  custom_data?: Record<string, unknown>;
  push_notification_title_override?: string;
  member_user_ids?: string[];
  created_at: string;
  updated_at: string;
  last_message_at?: string;
}

/** Parts a server sends: inline content or a URL (attachments are uploaded by the chat client). */
export type NewPart = { type: string; content: string } | { type: string; url: string };

export interface MessagePart {
  type: string;
  content?: string;
  url?: string;
  attachment?: { id: string; download_url: string; refresh_url: string; expiration: string; name?: string; size?: number; custom_data?: unknown };
}

export interface Message {
  id: number;
  user_id: string;
  room_id: string;
  parts: MessagePart[];
  created_at: string;
  updated_at: string;
  deleted_at?: string;
  /** Present when the message has reactions: counts per type, the caller's own types, the newest few. */
  reactions?: MessageReactions;
  /** Present when the message has replies (docs/api.md, Threads). */
  thread?: ThreadSummary;
  /** A thread reply: its thread's first message. */
  parent_id?: number;
}

export interface ThreadSummary {
  reply_count: number;
  last_reply_at: string;
  /** The starter, then repliers in the order they first replied (at most 10). */
  participants: string[];
}

export interface UserThread extends ThreadSummary {
  room_id: string;
  parent_id: number;
  last_reply_id: number;
  /** Replies after the user's read cursor in the thread. */
  unread_count: number;
  /** Absent once the first message is deleted. */
  parent?: Message;
}

export interface ThreadCursor {
  room_id: string;
  parent_id: number;
  user_id: string;
  position: number;
  updated_at: string;
}

export interface MessageReactions {
  counts: Record<string, number>;
  mine: string[];
  latest: Reaction[];
}

export interface Pin {
  message_id: number;
  pinned_by?: string;
  pinned_at: string;
  until?: string;
  message: Message;
}

export type ReportCategory = 'spam' | 'harassment' | 'hate' | 'violence' | 'sexual' | 'self_harm' | 'illegal' | 'impersonation' | 'other';
export type ReportResolutionAction = 'dismiss' | 'delete_message' | 'other';

/** A report in the review queue (`parley_admin`). */
export interface Report {
  id: string;
  status: 'open' | 'resolved';
  category: ReportCategory;
  reason: string;
  reason_erased?: true;
  reporter_id: string;
  filed_at: string;
  target: { kind: 'message'; room_id: string; message_id: number; user_id: string; message: Message | null } | { kind: 'user'; user_id: string };
  resolution?: { action: ReportResolutionAction; note: string; resolved_by?: string; resolved_at: string };
}

export interface Mute {
  user_id: string;
  muted_at: string;
}

/** A ban standing in a room (`room_id`) or the instance. */
export interface Ban {
  user_id: string;
  room_id?: string;
  reason: string;
  shadow: boolean;
  banned_by?: string;
  banned_at: string;
  until?: string;
}

/** What a ban says: a reason (at most 500 characters), an end, and whether it is shadowed. */
export interface BanTerms {
  reason?: string;
  until?: Date | string;
  shadow?: boolean;
}

export interface Reaction {
  type: string;
  user_id: string;
  created_at: string;
}

export interface SearchMessagesOptions {
  /** The words to find (any case, with or without accents; "in quotes" for words in a row). */
  query: string;
  /** Search as this user (the rooms they are a member of); absent: as su, the whole instance. */
  userId?: string;
  roomIds?: string[];
  senderId?: string;
  /** RFC 3339: sent at or after. */
  from?: string;
  /** RFC 3339: sent before. */
  to?: string;
  hasAttachment?: boolean;
  order?: 'recent' | 'relevance';
  /** The `next` of the previous page. */
  cursor?: string;
  limit?: number;
}

export interface MessageSearchPage {
  /** `highlights`: where the query's words stand in the text part `parts[part]` (UTF-16 offsets in its `content`). */
  results: { message: Message; highlights: { part: number; start: number; end: number }[] }[];
  /** The `cursor` of the next page; absent on the last. */
  next?: string;
}

/**
 * What an app server needs from Parley's chat API (`chatkit/v6`), with the same option names
 * as `@pusher/chatkit-server`: issue access tokens for its users, manage users and rooms, send
 * and read messages. Every call rejects with `ErrorResponse` carrying the server's
 * `{error, error_description}` and status. Writes carry an `Idempotency-Key` and every call is
 * retried on transport failures, timeouts and 503 (`ServerOptions.retry`).
 */
export class ChatServer {
  private readonly locator: InstanceLocator;
  private readonly key: InstanceKey;
  private readonly chat: ServiceClient;
  /** Parley's administration API (the review queue). */
  private readonly admin: ServiceClient;

  constructor(options: ChatServerOptions) {
    if (!options || typeof options !== 'object') throw new TypeError('ChatServer needs {instanceLocator, key}');
    this.locator = parseInstanceLocator(options.instanceLocator);
    this.key = parseKey(options.key);
    this.chat = new ServiceClient(this.locator, 'chatkit', 'v6', options);
    this.admin = new ServiceClient(this.locator, 'parley_admin', 'v1', options);
  }

  /**
   * Answers a client's token request (your token endpoint): send `status` and `body` back as
   * they are. Local: it neither calls the server nor checks that the user exists.
   */
  authenticate({ userId, su, authPayload = { grant_type: 'client_credentials' }, tokenExpiry }: AuthenticateOptions): AuthenticationResponse {
    if (authPayload.grant_type !== 'client_credentials') {
      return {
        status: 422,
        headers: {},
        body: { error: 'token_provider/invalid_grant_type', error_description: `The grant_type provided, ${String(authPayload.grant_type)}, is unsupported` },
      };
    }
    const { token, expires_in } = this.generateAccessToken({ userId, su, tokenExpiry });
    return { status: 200, headers: {}, body: { access_token: token, token_type: 'bearer', expires_in } };
  }

  /** A chat access token: `sub` is the acting user, `su` makes it a superuser token. */
  generateAccessToken({ userId, su, tokenExpiry = TOKEN_LIFETIME_SECONDS }: { userId?: string; su?: boolean; tokenExpiry?: number }): {
    token: string;
    expires_in: number;
  } {
    if (userId !== undefined && (typeof userId !== 'string' || userId === '')) throw new TypeError('userId must be a non-empty string');
    if (!(Number.isInteger(tokenExpiry) && tokenExpiry > 0)) throw new TypeError('tokenExpiry must be a positive number of seconds');
    const token = signToken(this.key, { instance: this.locator.instanceId }, { sub: userId, su: su ? true : undefined }, { lifetimeSeconds: tokenExpiry });
    return { token, expires_in: tokenExpiry };
  }

  createUser({
    id,
    name,
    avatarURL,
    customData,
    idempotencyKey,
  }: { id: string; name: string; avatarURL?: string; customData?: Record<string, unknown> } & WriteOptions): Promise<User> {
    return this.call('POST', '/users', { su: true }, { id, name, avatar_url: avatarURL, custom_data: customData }, undefined, idempotencyKey);
  }

  getUser({ id }: { id: string }): Promise<User> {
    return this.call('GET', `/users/${encodeURIComponent(id)}`, { su: true });
  }

  /** Deletes the user at once (the deprecated synchronous delete the server SDK also offers). */
  async deleteUser({ userId, idempotencyKey }: { userId: string } & WriteOptions): Promise<void> {
    await this.call('DELETE', `/users/${encodeURIComponent(userId)}`, { su: true }, undefined, undefined, idempotencyKey);
  }

  /** The creator becomes a member; they are the token's user, as in the original SDK. */
  createRoom({
    creatorId,
    name,
    id,
    isPrivate = false,
    userIds,
    customData,
    pushNotificationTitleOverride,
    idempotencyKey,
  }: WriteOptions & {
    creatorId: string;
    name: string;
    id?: string;
    isPrivate?: boolean;
    userIds?: string[];
    customData?: Record<string, unknown>;
    pushNotificationTitleOverride?: string;
  }): Promise<Room> {
    return this.call(
      'POST',
      '/rooms',
      { su: true, userId: creatorId },
      {
        name,
        private: isPrivate,
        id,
        user_ids: userIds?.length ? userIds : undefined,
        custom_data: customData,
        push_notification_title_override: pushNotificationTitleOverride,
      },
      undefined,
      idempotencyKey,
    );
  }

  getRoom({ roomId }: { roomId: string }): Promise<Room> {
    return this.call('GET', `/rooms/${encodeURIComponent(roomId)}`, { su: true });
  }

  sendSimpleMessage({ roomId, userId, text, idempotencyKey }: { roomId: string; userId: string; text: string } & WriteOptions): Promise<{ message_id: number }> {
    return this.sendMultipartMessage({ roomId, userId, parts: [{ type: 'text/plain', content: text }], idempotencyKey });
  }

  /** A retry of a send whose answer was lost answers the first send's `message_id`: one message, never two. */
  sendMultipartMessage({
    roomId,
    userId,
    parts,
    idempotencyKey,
  }: { roomId: string; userId: string; parts: NewPart[] } & WriteOptions): Promise<{ message_id: number }> {
    return this.call('POST', `/rooms/${encodeURIComponent(roomId)}/messages`, { su: true, userId }, { parts }, undefined, idempotencyKey);
  }

  /** Newest first; `initialId` is exclusive and pages backwards (with the default direction). */
  fetchMultipartMessages({
    roomId,
    limit,
    initialId,
    direction,
  }: {
    roomId: string;
    limit?: number;
    initialId?: number;
    direction?: 'older' | 'newer';
  }): Promise<Message[]> {
    return this.call('GET', `/rooms/${encodeURIComponent(roomId)}/messages`, { su: true }, undefined, {
      limit,
      initial_id: initialId,
      direction,
    });
  }

  /** A reply in the thread of `messageId`, shown in the room too with `alsoInRoom`; a retry with the same key answers the first reply's id. */
  replyToMessage({
    roomId,
    messageId,
    userId,
    parts,
    alsoInRoom,
    idempotencyKey,
  }: { roomId: string; messageId: number; userId: string; parts: NewPart[]; alsoInRoom?: boolean } & WriteOptions): Promise<{ message_id: number }> {
    return this.call('POST', `${messagePath(roomId, messageId)}/replies`, { su: true, userId }, { parts, also_in_room: alsoInRoom }, undefined, idempotencyKey);
  }

  /** A thread's replies, paged as `fetchMultipartMessages` pages a room. */
  listReplies({ roomId, messageId, limit, initialId, direction }: { roomId: string; messageId: number; limit?: number; initialId?: number; direction?: 'older' | 'newer' }): Promise<Message[]> {
    return this.call('GET', `${messagePath(roomId, messageId)}/replies`, { su: true }, undefined, { limit, initial_id: initialId, direction });
  }

  /** Moves the user's read cursor in the thread forward to `position` (a reply id). */
  async setThreadCursor({ roomId, messageId, userId, position, idempotencyKey }: { roomId: string; messageId: number; userId: string; position: number } & WriteOptions): Promise<void> {
    await this.call('PUT', threadCursorPath(roomId, messageId, userId), { su: true }, { position }, undefined, idempotencyKey);
  }

  getThreadCursor({ roomId, messageId, userId }: { roomId: string; messageId: number; userId: string }): Promise<ThreadCursor> {
    return this.call('GET', threadCursorPath(roomId, messageId, userId), { su: true });
  }

  /** The threads the user started or replied in, newest activity first, with unread counts; pass `next` as `before` for the next page. */
  listUserThreads({ userId, before, limit }: { userId: string; before?: string; limit?: number }): Promise<{ threads: UserThread[]; next?: string }> {
    return this.call('GET', `/users/${encodeURIComponent(userId)}/threads`, { su: true }, undefined, { before, limit });
  }

  /** Message search (docs/api.md "Message search"): a page of the messages holding every word of `query`. */
  searchMessages({ query, userId, roomIds, senderId, from, to, hasAttachment, order, cursor, limit }: SearchMessagesOptions): Promise<MessageSearchPage> {
    return this.call('GET', '/search/messages', userId === undefined ? { su: true } : { su: false, userId }, undefined, {
      q: query,
      room_ids: roomIds?.join(','),
      user_id: senderId,
      from,
      to,
      has_attachment: hasAttachment === undefined ? undefined : String(hasAttachment),
      order,
      cursor,
      limit,
    });
  }

  /** The user reacts to the message with `type` (an emoji, a shortcode); again: nothing changes. */
  async addReaction({ roomId, messageId, userId, type, idempotencyKey }: ReactionOptions & WriteOptions): Promise<void> {
    await this.call('PUT', reactionPath(roomId, messageId, type), { su: true, userId }, undefined, undefined, idempotencyKey);
  }

  /** The user's reaction of `type` is removed; one they do not hold: nothing changes. */
  async removeReaction({ roomId, messageId, userId, type, idempotencyKey }: ReactionOptions & WriteOptions): Promise<void> {
    await this.call('DELETE', reactionPath(roomId, messageId, type), { su: true, userId }, undefined, undefined, idempotencyKey);
  }

  /** Who reacted to a message, oldest first; pass a page's `next` as `after` for the following one. */
  listReactions({
    roomId,
    messageId,
    type,
    after,
    limit,
  }: {
    roomId: string;
    messageId: number;
    type?: string;
    after?: string;
    limit?: number;
  }): Promise<{ reactions: Reaction[]; next?: string }> {
    return this.call('GET', `/rooms/${encodeURIComponent(roomId)}/messages/${messageId}/reactions`, { su: true }, undefined, { type, after, limit });
  }

  /** Pins a message in its room (as `userId` when given), optionally until a time; again: only `until` changes. */
  async pinMessage({ roomId, messageId, userId, until, idempotencyKey }: { roomId: string; messageId: number; userId?: string; until?: Date | string } & WriteOptions): Promise<void> {
    const body = until === undefined ? undefined : { until: until instanceof Date ? until.toISOString() : until };
    await this.call('PUT', pinPath(roomId, messageId), { su: true, userId }, body, undefined, idempotencyKey);
  }

  /** Unpins a message; one not pinned: nothing changes. */
  async unpinMessage({ roomId, messageId, idempotencyKey }: { roomId: string; messageId: number } & WriteOptions): Promise<void> {
    await this.call('DELETE', pinPath(roomId, messageId), { su: true }, undefined, undefined, idempotencyKey);
  }

  /** The room's standing pins, newest pinned first, each with its message. */
  listPins({ roomId }: { roomId: string }): Promise<{ pins: Pin[] }> {
    return this.call('GET', `/rooms/${encodeURIComponent(roomId)}/pins`, { su: true });
  }

  /** Files `reporterId`'s report of a message; the same reporter's open report of it already standing is answered again. */
  reportMessage({
    roomId,
    messageId,
    reporterId,
    category,
    reason,
    idempotencyKey,
  }: { roomId: string; messageId: number; reporterId: string; category: ReportCategory; reason?: string } & WriteOptions): Promise<{ id: string; status: 'open' }> {
    return this.call('POST', `/rooms/${encodeURIComponent(roomId)}/messages/${messageId}/reports`, { su: true, userId: reporterId }, { category, reason }, undefined, idempotencyKey);
  }

  /** Files `reporterId`'s report of the user `userId`. */
  reportUser({
    userId,
    reporterId,
    category,
    reason,
    idempotencyKey,
  }: { userId: string; reporterId: string; category: ReportCategory; reason?: string } & WriteOptions): Promise<{ id: string; status: 'open' }> {
    return this.call('POST', `/users/${encodeURIComponent(userId)}/reports`, { su: true, userId: reporterId }, { category, reason }, undefined, idempotencyKey);
  }

  /** The review queue, oldest first: `status` open (default), resolved or all; `after` is a page's `next`. */
  listReports({ status, after, limit }: { status?: 'open' | 'resolved' | 'all'; after?: string; limit?: number } = {}): Promise<{ reports: Report[]; next?: string }> {
    return this.adminCall('GET', '/reports', undefined, { status, after, limit });
  }

  getReport({ reportId }: { reportId: string }): Promise<Report> {
    return this.adminCall('GET', `/reports/${encodeURIComponent(reportId)}`);
  }

  /** Closes a report (`delete_message` also deletes the reported message); answers the resolved report. */
  resolveReport({
    reportId,
    action,
    note,
    idempotencyKey,
  }: { reportId: string; action: ReportResolutionAction; note?: string } & WriteOptions): Promise<Report> {
    return this.adminCall('POST', `/reports/${encodeURIComponent(reportId)}/resolve`, { action, note }, undefined, idempotencyKey);
  }

  /** `userId` mutes `mutedUserId` for themselves; again: nothing changes. */
  async muteUser({ userId, mutedUserId, idempotencyKey }: { userId: string; mutedUserId: string } & WriteOptions): Promise<void> {
    await this.call('PUT', mutePath(userId, mutedUserId), { su: true }, undefined, undefined, idempotencyKey);
  }

  async unmuteUser({ userId, mutedUserId, idempotencyKey }: { userId: string; mutedUserId: string } & WriteOptions): Promise<void> {
    await this.call('DELETE', mutePath(userId, mutedUserId), { su: true }, undefined, undefined, idempotencyKey);
  }

  /** Who `userId` muted, newest first. */
  listMutes({ userId }: { userId: string }): Promise<{ mutes: Mute[] }> {
    return this.call('GET', `/users/${encodeURIComponent(userId)}/mutes`, { su: true });
  }

  private adminCall<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: Record<string, unknown>,
    query?: Record<string, string | number | undefined>,
    idempotencyKey?: string,
  ): Promise<T> {
    const token = this.generateAccessToken({ su: true, tokenExpiry: 5 * 60 }).token;
    const definedBody = body && Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
    return this.admin.request<T>({ method, path, query, body: definedBody, token, idempotencyKey });
  }

  /** Bans a user from a room (or, without `roomId`, from the whole instance); again: the terms change. */
  banUser({ roomId, userId, reason, until, shadow, idempotencyKey }: { roomId?: string; userId: string } & BanTerms & WriteOptions): Promise<Ban> {
    const body = { reason, until: until instanceof Date ? until.toISOString() : until, shadow };
    if (roomId === undefined) return this.call('PUT', `/bans/${encodeURIComponent(userId)}`, { su: true }, body, undefined, idempotencyKey, this.admin);
    return this.call('PUT', banPath(roomId, userId), { su: true }, body, undefined, idempotencyKey);
  }

  /** Lifts a user's ban from a room (or the instance); none standing: nothing changes. */
  async unbanUser({ roomId, userId, idempotencyKey }: { roomId?: string; userId: string } & WriteOptions): Promise<void> {
    if (roomId === undefined) await this.call('DELETE', `/bans/${encodeURIComponent(userId)}`, { su: true }, undefined, undefined, idempotencyKey, this.admin);
    else await this.call('DELETE', banPath(roomId, userId), { su: true }, undefined, undefined, idempotencyKey);
  }

  /** The bans standing in a room (or the instance), newest first. */
  listBans({ roomId }: { roomId?: string } = {}): Promise<{ bans: Ban[] }> {
    if (roomId === undefined) return this.call('GET', '/bans', { su: true }, undefined, undefined, undefined, this.admin);
    return this.call('GET', `/rooms/${encodeURIComponent(roomId)}/bans`, { su: true });
  }

  /** Makes a room read only (`frozen: true`) or writable again; su tokens still write to it. */
  async setRoomFrozen({ roomId, frozen, idempotencyKey }: { roomId: string; frozen: boolean } & WriteOptions): Promise<void> {
    await this.call(frozen ? 'PUT' : 'DELETE', `/rooms/${encodeURIComponent(roomId)}/freeze`, { su: true }, undefined, undefined, idempotencyKey);
  }

  /** Whether a room is frozen. */
  async isRoomFrozen({ roomId }: { roomId: string }): Promise<boolean> {
    return (await this.call<{ frozen: boolean }>('GET', `/rooms/${encodeURIComponent(roomId)}/freeze`, { su: true })).frozen;
  }

  private async call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    as: { su: boolean; userId?: string },
    body?: Record<string, unknown>,
    query?: Record<string, string | number | undefined>,
    idempotencyKey?: string,
    service: ServiceClient = this.chat,
  ): Promise<T> {
    const token = this.generateAccessToken({ userId: as.userId, su: as.su, tokenExpiry: 5 * 60 }).token;
    const definedBody = body && Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
    return service.request<T>({ method, path, query, body: definedBody, token, idempotencyKey });
  }
}

interface ReactionOptions {
  roomId: string;
  messageId: number;
  /** Whose reaction: the call is made with an su token naming this user. */
  userId: string;
  type: string;
}

const mutePath = (userId: string, mutedUserId: string) => `/users/${encodeURIComponent(userId)}/mutes/${encodeURIComponent(mutedUserId)}`;
const messagePath = (roomId: string, messageId: number) => `/rooms/${encodeURIComponent(roomId)}/messages/${messageId}`;

const threadCursorPath = (roomId: string, messageId: number, userId: string) =>
  `${messagePath(roomId, messageId)}/replies/read_cursors/${encodeURIComponent(userId)}`;
const banPath = (roomId: string, userId: string) => `/rooms/${encodeURIComponent(roomId)}/bans/${encodeURIComponent(userId)}`;

const pinPath = (roomId: string, messageId: number) => `/rooms/${encodeURIComponent(roomId)}/messages/${messageId}/pin`;

const reactionPath = (roomId: string, messageId: number, type: string) =>
  `/rooms/${encodeURIComponent(roomId)}/messages/${messageId}/reactions/${encodeURIComponent(type)}`;

export default ChatServer;

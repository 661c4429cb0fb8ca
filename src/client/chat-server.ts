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

  constructor(options: ChatServerOptions) {
    if (!options || typeof options !== 'object') throw new TypeError('ChatServer needs {instanceLocator, key}');
    this.locator = parseInstanceLocator(options.instanceLocator);
    this.key = parseKey(options.key);
    this.chat = new ServiceClient(this.locator, 'chatkit', 'v6', options);
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

  private async call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    as: { su: boolean; userId?: string },
    body?: Record<string, unknown>,
    query?: Record<string, string | number | undefined>,
    idempotencyKey?: string,
  ): Promise<T> {
    const token = this.generateAccessToken({ userId: as.userId, su: as.su, tokenExpiry: 5 * 60 }).token;
    const definedBody = body && Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
    return this.chat.request<T>({ method, path, query, body: definedBody, token, idempotencyKey });
  }
}

interface ReactionOptions {
  roomId: string;
  messageId: number;
  /** Whose reaction: the call is made with an su token naming this user. */
  userId: string;
  type: string;
}

const pinPath = (roomId: string, messageId: number) => `/rooms/${encodeURIComponent(roomId)}/messages/${messageId}/pin`;

const reactionPath = (roomId: string, messageId: number, type: string) =>
  `/rooms/${encodeURIComponent(roomId)}/messages/${messageId}/reactions/${encodeURIComponent(type)}`;

export default ChatServer;

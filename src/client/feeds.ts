import { ClientError, InvalidGrantTypeError, UnsupportedGrantTypeError } from './errors';
import { ServerOptions, ServiceClient, WriteOptions } from './http';
import { InstanceKey, InstanceLocator, parseInstanceLocator, parseKey } from './instance-locator';
import { CachedToken, FEEDS_TOKEN_LEEWAY_SECONDS, signToken, TOKEN_LIFETIME_SECONDS, verifyToken } from './tokens';

export { ClientError, ErrorResponse, InvalidGrantTypeError, UnsupportedGrantTypeError } from './errors';
export type { ServerOptions, WriteOptions } from './http';
export type { RetryOptions } from './retries';

export interface FeedsOptions extends ServerOptions {
  /** `v1:<cluster>:<instanceId>` */
  instanceLocator: string;
  /** `<keyId>:<secret>` */
  key: string;
}

export interface FeedItem<T = unknown> {
  /** A string that increases within the feed. */
  id: string;
  /** Unix seconds. */
  created: number;
  data: T;
}

export interface FeedPage<T = unknown> {
  /** Newest first. */
  items: FeedItem<T>[];
  /** Pass as `cursor` for the next (older) page; null at the end. */
  next_cursor: string | null;
  /** Items older than this page. */
  remaining?: number;
}

/** What publishing answers: the new items' ids, in the order given. */
export interface PublishResult {
  item_ids: string[];
}

/** A listed (non-empty) feed. */
export interface FeedSummary {
  id: string;
  item_count: number;
}

/** The form a feeds client posts to the app's auth endpoint (parsed), plus whatever `authData` it adds. */
export interface AuthorizePayload {
  path: string;
  action: string;
  grant_type: string;
  refresh_token?: string;
  [field: string]: unknown;
}

export interface FeedsToken {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
}

export type FeedsAction = 'READ';

const FEED_PATH = /^feeds\/([a-zA-Z0-9-]+)\/items$/;
/** Clients may only ask to read; publishing and deleting are the server's (this library's) business. */
const CLIENT_ACTIONS: readonly string[] = ['READ'];

/**
 * Parley's Feeds server library: publish to and read feeds of one instance
 * (`/services/feeds/v1/<instanceId>`), and issue read tokens to feeds clients from an app's
 * auth endpoint. Same operations and errors as `pusher-feeds-server`, with a `host`/`port`/`tls`
 * option; requests reject with `ErrorResponse` carrying the server's `{error, error_description}`.
 * Writes carry an `Idempotency-Key` and every request is retried on transport failures,
 * timeouts and 503 (`ServerOptions.retry`).
 */
export class Feeds {
  private readonly locator: InstanceLocator;
  private readonly key: InstanceKey;
  private readonly service: ServiceClient;
  /** Full access (`feeds.permission` `*`/`*`), signed once a day. */
  private readonly serverToken: CachedToken;

  constructor(options: FeedsOptions) {
    if (!options || typeof options !== 'object') throw new TypeError('Feeds needs {instanceLocator, key}');
    this.locator = parseInstanceLocator(options.instanceLocator);
    this.key = parseKey(options.key);
    this.service = new ServiceClient(this.locator, 'feeds', 'v1', options);
    this.serverToken = new CachedToken(() => ({
      token: this.signAccessToken('*', '*'),
      lifetimeSeconds: TOKEN_LIFETIME_SECONDS - FEEDS_TOKEN_LEEWAY_SECONDS,
    }));
  }

  /** Appends one item (creating the feed if needed). */
  async publish(feedId: string, item: unknown, options?: WriteOptions): Promise<PublishResult> {
    return this.publishBatch(feedId, [item], options);
  }

  /** Appends the items in array order, all or none; a retry whose first answer was lost answers the same `item_ids`. */
  async publishBatch(feedId: string, items: unknown[], { idempotencyKey }: WriteOptions = {}): Promise<PublishResult> {
    if (!Array.isArray(items)) throw new TypeError('items must be an array');
    return this.service.request({ method: 'POST', path: itemsPath(feedId), body: { items }, token: this.serverToken.get(), idempotencyKey });
  }

  /** One page, newest first; without `cursor` the most recent items. */
  async paginate<T = unknown>(feedId: string, { cursor, limit = 50 }: { cursor?: string | number; limit?: number } = {}): Promise<FeedPage<T>> {
    return this.service.request({ method: 'GET', path: itemsPath(feedId), query: { cursor, limit }, token: this.serverToken.get() });
  }

  /** Non-empty feeds whose id starts with `prefix`, in id order. */
  async list({ prefix, limit }: { prefix?: string; limit?: number } = {}): Promise<FeedSummary[]> {
    return this.service.request({ method: 'GET', path: '/feeds', query: { prefix, limit }, token: this.serverToken.get() });
  }

  /** Deletes every item of the feed. */
  async delete(feedId: string, { idempotencyKey }: WriteOptions = {}): Promise<void> {
    await this.service.request({ method: 'DELETE', path: itemsPath(feedId), token: this.serverToken.get(), idempotencyKey });
  }

  /**
   * For the app's feeds auth endpoint: checks the client's (parsed form) payload, asks
   * `hasPermission(action, feedId)`, and returns the token JSON to answer with status 200.
   * Rejects with `ClientError` (bad payload, or "Forbidden"), `UnsupportedGrantTypeError` or
   * `InvalidGrantTypeError`; answer those with a 4xx (403 for "Forbidden").
   */
  async authorizeFeed(payload: AuthorizePayload, hasPermission: (action: FeedsAction, feedId: string) => boolean | Promise<boolean>): Promise<FeedsToken> {
    if (typeof hasPermission !== 'function') throw new TypeError('hasPermission must be a function');
    return this.authorize(payload, (path) => {
      const feedId = FEED_PATH.exec(path)?.[1];
      if (!feedId) throw new ClientError(`Path must match ${FEED_PATH}`);
      return feedId;
    }, hasPermission);
  }

  /** As `authorizeFeed` for any path (e.g. `feeds` to list, `firehose/items`); the callback gets the path. */
  async authorizePath(payload: AuthorizePayload, hasPermission: (action: FeedsAction, path: string) => boolean | Promise<boolean>): Promise<FeedsToken> {
    if (typeof hasPermission !== 'function') throw new TypeError('hasPermission must be a function');
    return this.authorize(payload, (path) => path, hasPermission);
  }

  private async authorize(
    payload: AuthorizePayload,
    subjectOf: (path: string) => string,
    hasPermission: (action: FeedsAction, subject: string) => boolean | Promise<boolean>,
  ): Promise<FeedsToken> {
    if (!payload || typeof payload !== 'object') throw new ClientError('Payload must be provided');
    const { path, action, grant_type: grantType } = payload;
    if (typeof path !== 'string' || !path || typeof action !== 'string' || !action) {
      throw new ClientError('Must provide "action" and "path" in the request body');
    }
    if (!CLIENT_ACTIONS.includes(action)) throw new ClientError(`Action must be one of ${JSON.stringify(CLIENT_ACTIONS)}`);
    const subject = subjectOf(path);
    if (grantType === 'refresh_token') this.checkRefreshToken(payload.refresh_token);
    else if (grantType !== 'client_credentials') throw new UnsupportedGrantTypeError(`Requested type: "${String(grantType)}" is not supported`);
    // The callback runs on refreshes too: a refresh token never outlives the app's decision.
    if (!(await hasPermission(action as FeedsAction, subject))) throw new ClientError('Forbidden');
    return {
      access_token: this.signAccessToken(path, action),
      token_type: 'bearer',
      expires_in: TOKEN_LIFETIME_SECONDS,
      refresh_token: signToken(this.key, { app: this.locator.instanceId }, { refresh: true }, { backdateSeconds: FEEDS_TOKEN_LEEWAY_SECONDS, expires: false }),
    };
  }

  private checkRefreshToken(refreshToken: unknown): void {
    const claims = verifyToken(this.key, refreshToken, FEEDS_TOKEN_LEEWAY_SECONDS);
    if (!claims) throw new InvalidGrantTypeError('refresh token is invalid or has expired');
    if (claims.refresh !== true) throw new InvalidGrantTypeError('refresh token does not have a refresh claim');
    if (claims.app !== this.locator.instanceId) throw new InvalidGrantTypeError('refresh token is for another instance');
  }

  /** §5.3: `app` claim, `iat` backdated ten minutes, `feeds.permission` naming what it may do. */
  private signAccessToken(path: string, action: string): string {
    return signToken(
      this.key,
      { app: this.locator.instanceId },
      { feeds: { permission: { path, action } } },
      { backdateSeconds: FEEDS_TOKEN_LEEWAY_SECONDS },
    );
  }
}

function itemsPath(feedId: string): string {
  if (typeof feedId !== 'string' || feedId === '') throw new TypeError('feedId must be a non-empty string');
  return `/feeds/${encodeURIComponent(feedId)}/items`;
}

export default Feeds;

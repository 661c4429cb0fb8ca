import { DomainError } from '../../shared/domain/errors';

/**
 * How many subscriptions one caller may hold open in this process (SUBSCRIPTIONS_* and
 * ANONYMOUS_SUBSCRIPTIONS_*; 0: no cap). A connection is one /ws socket (which multiplexes
 * many) or one HTTP SUBSCRIBE stream (which is one).
 */
export interface SubscriptionCapSettings {
  /** Any subscriptions on one connection. */
  readonly perConnection: number;
  /** Subscriptions of one user (an access token's `sub`) on every connection to this process. */
  readonly perUser: number;
  /** Subscriptions opened without an access token (feeds) on one connection… */
  readonly anonymousPerConnection: number;
  /** …and from one client address, on every connection to this process. */
  readonly anonymousPerAddress: number;
}

/** Where a subscription is opened from. */
export interface SubscriptionOrigin {
  /** Its connection: the /ws socket, or the HTTP request of a SUBSCRIBE stream. */
  readonly connection: object;
  /** The client's address (the connection's, or what a trusted proxy forwarded). */
  readonly address: string;
}

/** Who holds a subscription: a user of an instance, anyone holding a token without a user (su), or nobody (no token). */
export type SubscriptionHolder = { readonly instanceId: string; readonly userId?: string } | 'anonymous';

const tooMany = (what: string, cap: number) =>
  new DomainError(
    'too_many_requests',
    'too_many_subscriptions',
    `More than ${cap} open subscriptions ${what}; close one (unsubscribe) before opening another`,
  );

/**
 * The counts behind the caps: each open subscription holds one place per count it falls under
 * until its channel closes. The SDKs' normal use stays far below the defaults (chatkit-client
 * opens one subscription per user it has seen for presence, three per room it subscribes to,
 * and three of its own); a caller past a cap is refused with 429 `too_many_subscriptions` in the
 * subscription protocol (an end-of-stream frame on /ws, the status of the SUBSCRIBE answer), and
 * what it already has keeps running.
 */
export class SubscriptionCaps {
  private readonly perConnection = new WeakMap<object, { all: number; anonymous: number }>();
  private readonly perUser = new Map<string, number>();
  private readonly anonymousPerAddress = new Map<string, number>();

  constructor(private readonly caps: SubscriptionCapSettings) {}

  /** Takes a place for one subscription of `holder` from `origin`, or throws the 429; call the result once it has closed. */
  take(origin: SubscriptionOrigin, holder: SubscriptionHolder): () => void {
    const anonymous = holder === 'anonymous';
    const connection = this.perConnection.get(origin.connection) ?? { all: 0, anonymous: 0 };
    const userKey = !anonymous && holder.userId !== undefined ? `${holder.instanceId}\u0000${holder.userId}` : null;
    const { caps } = this;
    if (over(connection.all, caps.perConnection)) throw tooMany('on one connection', caps.perConnection);
    if (anonymous && over(connection.anonymous, caps.anonymousPerConnection)) {
      throw tooMany('without an access token on one connection', caps.anonymousPerConnection);
    }
    if (anonymous && over(this.anonymousPerAddress.get(origin.address) ?? 0, caps.anonymousPerAddress)) {
      throw tooMany('without an access token from one address', caps.anonymousPerAddress);
    }
    if (userKey !== null && over(this.perUser.get(userKey) ?? 0, caps.perUser)) throw tooMany('for one user', caps.perUser);

    connection.all++;
    if (anonymous) connection.anonymous++;
    this.perConnection.set(origin.connection, connection);
    if (anonymous) increment(this.anonymousPerAddress, origin.address, 1);
    if (userKey !== null) increment(this.perUser, userKey, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      connection.all--;
      if (anonymous) connection.anonymous--;
      if (anonymous) increment(this.anonymousPerAddress, origin.address, -1);
      if (userKey !== null) increment(this.perUser, userKey, -1);
    };
  }
}

/** Whether a count already holds every place a cap gives (0: no cap). */
const over = (count: number, cap: number): boolean => cap > 0 && count >= cap;

/** Adds `by` to a count, forgetting it at zero (the maps hold only callers with something open). */
function increment(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

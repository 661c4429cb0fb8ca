import { Injectable } from '@nestjs/common';
import FindMyWay from 'find-my-way';
import { badRequest, DomainError, notFound } from '../../shared/domain/errors';
import { EventChannel } from '../../shared/subscriptions/event-channel';
import { AccessTokenVerifier, RequestActor } from '../instances/authentication/access-token';
import { AccessRule, describeAccess, isAccessRule, needsAccessToken } from '../roles/access-rules';
import { SubscriptionCaps, SubscriptionOrigin } from './subscription-caps';

export interface SubscriptionRequest {
  /** Path and query, e.g. `/services/chatkit/v6/acme/rooms/r1?message_limit=10`. */
  readonly url: string;
  /** Request headers (HTTP) or the headers of a WebSocket SUBSCRIBE frame, in any letter case. */
  readonly headers: Readonly<Record<string, unknown>>;
  /** Its connection and client address, which the caps on open subscriptions count. */
  readonly origin: SubscriptionOrigin;
}

export interface SubscriptionContext {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly lastEventId?: string;
  /** The verified caller, for routes that need a token (an anonymous stand-in on the others). */
  readonly actor: RequestActor;
}

/**
 * A resuming client's `Last-Event-Id` as the whole number the timelines number their events by
 * (message ids, feed item ids), or undefined when absent or anything else (the stream opens afresh).
 */
export const numericLastEventId = (raw: string | undefined): number | undefined => {
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) ? n : undefined;
};

/**
 * Opens one subscription: registers its listeners and pushes its initial events into the
 * channel, or throws a DomainError (answered before the stream opens). Clean-ups go to
 * `channel.onClose`.
 */
export type SubscriptionHandler = (context: SubscriptionContext, channel: EventChannel) => Promise<void>;

/**
 * Checks a caller may open a subscription whose route declares `rule` (throws a DomainError,
 * answered before the stream opens) and ends it later (`channel.end`) when the grant is
 * revoked. `route` is the pattern as registered.
 */
export type SubscriptionAuthorizer = (rule: AccessRule, context: SubscriptionContext, route: string, channel: EventChannel) => Promise<void>;

export interface SubscriptionRoute {
  readonly pattern: string;
  /** What the route requires of its caller (see `AccessRule`). */
  readonly requires: AccessRule;
  readonly handler: SubscriptionHandler;
}

/**
 * Every subscription route, served alike by HTTP `SUBSCRIBE` and by the WebSocket bridge on
 * /ws: both transports hand a path and headers here and frame what comes out.
 */
@Injectable()
export class SubscriptionRoutes {
  private readonly router = FindMyWay({ ignoreTrailingSlash: true, ignoreDuplicateSlashes: true });
  private readonly table: SubscriptionRoute[] = [];
  private authorizer: SubscriptionAuthorizer | null = null;

  constructor(
    private readonly verifier: AccessTokenVerifier,
    private readonly caps: SubscriptionCaps,
  ) {}

  /**
   * `pattern` uses `:param` segments (`:instanceId` among them when the rule needs a token);
   * `requires` declares what the caller needs, e.g. `Access.permission('room:get', { room: 'roomId' })`.
   */
  register(pattern: string, requires: AccessRule, handler: SubscriptionHandler): void {
    if (!isAccessRule(requires)) {
      throw new Error(`The subscription route SUBSCRIBE ${pattern} declares no access: give register() an AccessRule (Access.…)`);
    }
    if (requires.kind === 'operator') {
      throw new Error(`The subscription route SUBSCRIBE ${pattern} requires the deployment credential, which only HTTP routes check`);
    }
    if (needsAccessToken(requires) && !pattern.includes(':instanceId')) {
      throw new Error(`The subscription route SUBSCRIBE ${pattern} requires ${describeAccess(requires)} but has no :instanceId to verify tokens for`);
    }
    const index = this.table.push({ pattern, requires, handler }) - 1;
    this.router.on('SUBSCRIBE', pattern, () => undefined, { index });
  }

  /** Every registered route with its rule (the route access test checks them). */
  get routes(): readonly SubscriptionRoute[] {
    return this.table;
  }

  /** Every registered pattern (the OpenAPI route test checks the document against them). */
  get patterns(): readonly string[] {
    return this.table.map((route) => route.pattern);
  }

  /** The pattern serving a subscription path, for logs ('unmatched' when none does): never the path itself. */
  routeOf(url: string): string {
    const path = url.split('?', 1)[0];
    const found = isPercentDecodable(path) ? this.router.find('SUBSCRIBE', path) : null;
    return found ? this.routes[(found.store as { index: number }).index].pattern : 'unmatched';
  }

  /** The roles module checks every subscription that needs a token through this. */
  authorizeWith(authorizer: SubscriptionAuthorizer): void {
    this.authorizer = authorizer;
  }

  async open(request: SubscriptionRequest): Promise<EventChannel> {
    const [path, search = ''] = request.url.split('?', 2) as [string, string?];
    // As Fastify answers HTTP (FST_ERR_BAD_URL): the router would only say "not found".
    if (!isPercentDecodable(path)) throw badRequest('invalid_path', 'The path is not valid percent-encoded text');
    const found = this.router.find('SUBSCRIBE', path);
    if (!found) throw notFound('route_not_found', `No subscription is served at ${path}`);
    const route = this.table[(found.store as { index: number }).index];
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string') headers[name.toLowerCase()] = value;
    }
    const params = found.params as Record<string, string>;
    const tokenNeeded = needsAccessToken(route.requires);
    const actor = tokenNeeded
      ? await this.verifier.verify(headers.authorization, params.instanceId)
      : ({ instanceId: params.instanceId, keyId: '', su: false } as RequestActor);
    // Refused (429) before anything is opened; its place is given back when the channel closes.
    const release = this.caps.take(request.origin, tokenNeeded ? actor : 'anonymous');
    const channel = new EventChannel();
    channel.onClose(release);
    const context = { params, query: new URLSearchParams(search), headers, lastEventId: headers['last-event-id'], actor };
    try {
      if (tokenNeeded) {
        // Without the roles module's check nothing that needs a token is served.
        if (!this.authorizer) throw new Error('No access check is installed for subscriptions');
        await this.authorizer(route.requires, context, route.pattern, channel);
      }
      await route.handler(context, channel);
    } catch (error) {
      channel.close();
      throw error;
    }
    return channel;
  }
}

const isPercentDecodable = (path: string): boolean => {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
};

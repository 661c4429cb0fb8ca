import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, ParleyConfig } from '../../../config/config';
import jwt from 'jsonwebtoken';
import { DomainError, forbidden, notFound } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { KeyRing } from '../../instances/authentication/key-ring';
import { unauthorized } from '../../instances/authentication/access-token';
import { tokenLifetimeRefusal } from '../../instances/authentication/token-lifetime';
import { isPrivateFeed } from '../domain/feed.decider';
import { feedItemsPath } from '../feeds-route';
import { bearerCredential } from '../../../shared/http/bearer';
import { consoleUserProblem } from '../../../shared/domain/console-user';

/** READ: paginate, subscribe, list, firehose. WRITE: publish and delete (server tokens hold `*`). */
export type FeedAction = 'READ' | 'WRITE';

/** What a verified Feeds token grants (wire study §5.3). */
interface FeedsClaims {
  readonly app?: unknown;
  readonly iss?: unknown;
  readonly iat?: unknown;
  readonly exp?: unknown;
  readonly su?: unknown;
  readonly sub?: unknown;
  readonly console_user?: unknown;
  readonly feeds?: { readonly permission?: { readonly path?: unknown; readonly action?: unknown } };
}

const ISSUER = /^api_keys\/(.+)$/;

/** A permission path covers a request path when equal, `*`, or a prefix ending in `*`. */
const covers = (granted: unknown, wanted: string): boolean =>
  typeof granted === 'string' && (granted === '*' || granted === wanted || (granted.endsWith('*') && wanted.startsWith(granted.slice(0, -1))));

/**
 * A token that no retry can make valid: not signed by an active key of the instance (unknown,
 * disabled or deleted key), a bad signature, another instance, no `exp`, not a JWT. feeds-client
 * retries a 401 on a subscription at once, with the same cached token, for as long as it thinks
 * the token fresh (wire study §3.3): a 401 here would be a hot loop for up to a day. A 403 ends
 * the subscription with an error the page sees. Only a missing and an expired token are 401.
 */
const unusableToken = (description: string): DomainError => forbidden('invalid_token', description);

/**
 * Checks the Feeds tokens that pusher-feeds-server mints and `authorizeFeed` returns: HS256
 * with an instance key named in `iss`, the instance in the `app` claim (not `instance`), a
 * backdated `iat`, `exp` ahead and within TOKEN_MAX_LIFETIME_SECONDS of `iat`, and
 * `feeds.permission {path, action}` covering
 * the request. A missing or expired token is a 401 (a fresh token helps: feeds-client fetches
 * one when its cached one is stale); a token that can never pass, or a good token for another
 * path, is a 403, because feeds-client retries a 401 at once and forever.
 */
@Injectable()
export class FeedAccess {
  constructor(
    private readonly keyRing: KeyRing,
    @Inject(CONFIG) private readonly config: ParleyConfig,
  ) {}

  /** The caller of a request that needs a token whose permission covers `path` for `action`. */
  async require(instanceId: string, authorization: string | undefined, path: string, action: FeedAction): Promise<Actor> {
    const keys = await this.keys(instanceId);
    const token = bearerCredential(authorization);
    if (!token) throw unauthorized('missing_token', 'An Authorization header with a Feeds token (Bearer) is required');
    const decoded = jwt.decode(token, { json: true }) as FeedsClaims | null;
    const keyId = typeof decoded?.iss === 'string' ? ISSUER.exec(decoded.iss)?.[1] : undefined;
    const key = keyId === undefined ? undefined : keys.get(keyId);
    if (!key) throw unusableToken('The token was not signed with an active key of this instance (iss api_keys/<key id>)');
    let claims: FeedsClaims;
    try {
      claims = jwt.verify(token, key, { algorithms: ['HS256'] }) as FeedsClaims;
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError) throw unauthorized('token_expired', 'The token has expired');
      throw unusableToken('The token signature or claims are invalid');
    }
    if (claims.app !== instanceId) throw unusableToken('The token was issued for another instance (app claim)');
    if (typeof claims.exp !== 'number') throw unusableToken('The token has no "exp" claim');
    // A 403, like every refusal a fresh copy of the same token cannot fix (see unusableToken).
    const tooLong = tokenLifetimeRefusal(claims, this.config.tokenMaxLifetimeSeconds);
    if (tooLong) throw unusableToken(tooLong);
    const permission = claims.feeds?.permission;
    const allowed = claims.su === true || (covers(permission?.path, path) && (permission?.action === '*' || permission?.action === action));
    if (!allowed) throw forbidden('permission_denied', `The token does not grant ${action} on ${path}`);
    const badConsoleUser = claims.console_user === undefined ? null : consoleUserProblem(claims.console_user);
    if (badConsoleUser) throw unusableToken(`The token's "console_user" claim is not usable: ${badConsoleUser}`);
    return {
      key_id: keyId,
      ...(typeof claims.sub === 'string' && claims.sub !== '' && { user_id: claims.sub }),
      ...(claims.su === true && { su: true }),
      ...(typeof claims.console_user === 'string' && { console_user: claims.console_user }),
    };
  }

  /** Reading a feed: public feeds need no token, `private-` feeds one covering `feeds/<id>/items`. */
  async readFeed(instanceId: string, feedId: string, authorization: string | undefined): Promise<void> {
    if (isPrivateFeed(feedId)) await this.require(instanceId, authorization, feedItemsPath(feedId), 'READ');
    else await this.keys(instanceId);
  }

  private async keys(instanceId: string) {
    const instance = await this.keyRing.instance(instanceId);
    if (!instance) throw instanceNotFound(instanceId);
    return instance.keys;
  }
}

export const instanceNotFound = (instanceId: string): DomainError =>
  notFound('instance_not_found', `The instance "${instanceId}" does not exist`);

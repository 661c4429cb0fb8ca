import { Injectable } from '@nestjs/common';
import { forbidden } from '../../shared/domain/errors';
import { toErrorResponse } from '../../shared/http/error.filter';
import { EventChannel } from '../../shared/subscriptions/event-channel';
import { RequestActor } from '../instances/authentication/access-token';
import { requireSelfOrSu, requireSu } from '../instances/authentication/access-token.guard';
import { TokenStanding } from '../instances/authentication/token-standing';
import { SubscriptionAuthorizer } from '../streaming/subscription-routes';
import { AccessRule, needsAccessToken } from './access-rules';
import { RolePermissions } from './role-permissions';
import { RestrictionOutcome, Restrictions } from '../bans/restrictions';

/** The call a rule is checked for: its method (`SUBSCRIBE` for a subscription) and its route as the server names it. */
export interface RouteCall {
  readonly method: string;
  readonly route: string;
}

export type RouteParams = Readonly<Record<string, string | undefined>>;

/** Answered to a call of a route that declares nothing: no declaration grants nothing. */
export const accessUndeclared = () =>
  forbidden('access_undeclared', 'This route declares no access requirement, so it serves no one');

/**
 * The one check of what a route declares (`AccessRule`) against the caller its token names:
 * Nest routes reach it through `AccessGuard`, subscriptions through `SubscriptionRoutes`, raw
 * Fastify routes through the hook `DeclaredRoutes` gives them. su passes every rule.
 */
@Injectable()
export class AccessCheck {
  constructor(
    private readonly permissions: RolePermissions,
    private readonly standing: TokenStanding,
    private readonly restrictions: Restrictions,
  ) {}

  /**
   * Throws the 401/403 the caller gets unless `actor` may call a route declaring `rule` with
   * `params`; with `call`, then also unless a ban or a frozen room stops it (`Restrictions`).
   */
  async authorize(rule: AccessRule, actor: RequestActor, params: RouteParams, call?: RouteCall): Promise<RestrictionOutcome | undefined> {
    await this.ruleAllows(rule, actor, params);
    if (call === undefined || call.method === 'GET' || call.method === 'HEAD') return undefined;
    return this.restrictions.enforce(actor, params.roomId, call.method === 'SUBSCRIBE' ? 'subscribe' : 'write', `${call.method} ${call.route}`);
  }

  private async ruleAllows(rule: AccessRule, actor: RequestActor, params: RouteParams): Promise<void> {
    if (!needsAccessToken(rule)) throw new Error(`authorize() is for rules that need an access token, not "${rule.kind}"`);
    await this.standing.require(actor);
    switch (rule.kind) {
      case 'authenticated':
        return;
      case 'su':
        return requireSu(actor);
      case 'self-or-su':
        return requireSelfOrSu(actor, params[rule.user] ?? '');
      case 'permission':
        await this.permissions.require(actor, rule.permission, rule.room === undefined ? undefined : (params[rule.room] ?? ''));
        if (rule.self !== undefined) requireSelfOrSu(actor, params[rule.self] ?? '');
        return;
      default:
        throw accessUndeclared();
    }
  }

  /**
   * The check of subscriptions, before they open; an open one is checked again on every role
   * change, every deletion or creation concerning its user and every ban or unban of them, and
   * ends with the refusal (403, or 401 for a deleted user's token) when it no longer passes.
   */
  readonly subscriptions: SubscriptionAuthorizer = async (rule, { actor, params }, route, channel) => {
    const call = { method: 'SUBSCRIBE', route };
    await this.authorize(rule, actor, params, call);
    // Nothing can change for su; a token without a user has only the `default` role's grants to lose.
    if (actor.su || (actor.userId === undefined && rule.kind !== 'permission')) return;
    const recheck = () => {
      this.authorize(rule, actor, params, call).then(
        () => undefined,
        (error) => {
          const { status, body } = toErrorResponse(error, route.replace(':instanceId', actor.instanceId));
          channel.end(status, body);
        },
      );
    };
    channel.onClose(this.permissions.watch(actor.instanceId, actor.userId ?? '', recheck));
    if (actor.userId !== undefined) channel.onClose(this.restrictions.watch(actor.instanceId, actor.userId, recheck));
  };
}

import { applyDecorators, SetMetadata } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { AccessRule } from './access-rules';

/** Where `@Requires` leaves its rule on a controller method (read by `AccessGuard`). */
export const ACCESS_RULE = 'parley:access-rule';

/** What a Fastify route's `config` carries: the rule, and whether Nest's `AccessGuard` checks it. */
export interface RouteAccessConfig {
  readonly access?: AccessRule;
  readonly accessCheckedByGuard?: boolean;
}

/**
 * Declares what a controller route requires of its caller, e.g.
 * `@Requires(Access.permission('message:create', { room: 'roomId' }))`, `@Requires(Access.su)`,
 * `@Requires(Access.public)`. Every route must carry one (on the method, where a reader of the
 * route sees it): one without is refused and stops the start. The rule also goes into the
 * Fastify route's `config`, where the start-up check finds it among every other route.
 */
export const Requires = (rule: AccessRule): MethodDecorator =>
  applyDecorators(
    SetMetadata(ACCESS_RULE, rule),
    RouteConfig({ access: rule, accessCheckedByGuard: true } satisfies RouteAccessConfig),
  ) as MethodDecorator;

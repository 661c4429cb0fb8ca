import { PermissionName } from './domain/permissions';

/**
 * What a route requires of its caller, declared where the route is registered: `@Requires(…)`
 * on a controller method, `SubscriptionRoutes.register(pattern, rule, handler)` for a
 * subscription, `config: { access: rule }` on a raw Fastify route. The roles module reads the
 * declaration and checks it; a route that declares nothing is refused (and stops the start).
 * Path parameters are named as the route names them (`roomId`, `userId`).
 */
export type AccessRule =
  /** No credential at all (health, the test token provider, the Beams device API). */
  | { readonly kind: 'public' }
  /** The route checks a credential of its own kind (a Feeds token, the key secret, a signed link): `credential` says which. */
  | { readonly kind: 'own-credential'; readonly credential: string }
  /** The deployment credential (CONSOLE_ADMIN_SECRET), for what spans instances: no instance's token stands in for it. */
  | { readonly kind: 'operator' }
  /** Any valid access token of the instance, with or without a user. */
  | { readonly kind: 'authenticated' }
  /** A token with the `su` claim. */
  | { readonly kind: 'su' }
  /** A token of the user the `user` parameter names, or su. */
  | { readonly kind: 'self-or-su'; readonly user: string }
  /**
   * A role granting `permission` (the room's roles count too when `room` names the room
   * parameter), or su; with `self`, also a token of the user that parameter names (or su).
   */
  | { readonly kind: 'permission'; readonly permission: PermissionName; readonly room?: string; readonly self?: string };

export const Access = {
  public: { kind: 'public' } as AccessRule,
  ownCredential: (credential: string): AccessRule => ({ kind: 'own-credential', credential }),
  operator: { kind: 'operator' } as AccessRule,
  authenticated: { kind: 'authenticated' } as AccessRule,
  su: { kind: 'su' } as AccessRule,
  selfOrSu: (userParam: string): AccessRule => ({ kind: 'self-or-su', user: userParam }),
  permission: (permission: PermissionName, scope: { room?: string; self?: string } = {}): AccessRule => ({
    kind: 'permission',
    permission,
    ...(scope.room !== undefined && { room: scope.room }),
    ...(scope.self !== undefined && { self: scope.self }),
  }),
} as const;

const KINDS = new Set(['public', 'own-credential', 'operator', 'authenticated', 'su', 'self-or-su', 'permission']);

/** Whether `value` is a rule (a declaration that names no known kind counts as none). */
export const isAccessRule = (value: unknown): value is AccessRule =>
  typeof value === 'object' && value !== null && KINDS.has((value as { kind?: unknown }).kind as string);

/** Whether the route's caller must show an instance's access token before anything else runs. */
export const needsAccessToken = (rule: AccessRule): boolean => rule.kind !== 'public' && rule.kind !== 'own-credential' && rule.kind !== 'operator';

/** The rule in words, for start-up errors and route listings. */
export function describeAccess(rule: AccessRule): string {
  switch (rule.kind) {
    case 'public':
      return 'public';
    case 'own-credential':
      return `own credential: ${rule.credential}`;
    case 'operator':
      return 'the deployment credential (operator)';
    case 'authenticated':
      return 'any access token';
    case 'su':
      return 'su';
    case 'self-or-su':
      return `the user :${rule.user}, or su`;
    case 'permission':
      return [
        `permission ${rule.permission}`,
        ...(rule.room ? [`in the room :${rule.room}`] : []),
        ...(rule.self ? [`as the user :${rule.self} (or su)`] : []),
      ].join(' ');
  }
}

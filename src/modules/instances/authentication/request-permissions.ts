import type { FastifyRequest } from 'fastify';
import type { RequestActor } from './access-token';

/**
 * What the token guard asks once it knows the caller: whether the route allows it (the roles
 * context answers, from its table of routes and permissions). Throws to refuse.
 */
export interface RequestPermissions {
  check(request: FastifyRequest, actor: RequestActor): Promise<void>;
}

export const REQUEST_PERMISSIONS = Symbol('RequestPermissions');

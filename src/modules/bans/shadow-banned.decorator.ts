import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/** A request the access guard found made under a shadow ban (`Restrictions.enforce`). */
export type ShadowBannedRequest = FastifyRequest & { shadowBanned?: boolean };

/** Whether the caller writes under a shadow ban, as the access guard decided it for this request (no second read). */
export const ShadowBanned = createParamDecorator((_: unknown, context: ExecutionContext): boolean => {
  return context.switchToHttp().getRequest<ShadowBannedRequest>().shadowBanned === true;
});

import { Global, Module } from '@nestjs/common';
import { IdempotentRequests } from './idempotent-requests';

/**
 * `Idempotency-Key` on every write (docs/idempotency.md): `IdempotencyGuard` on each write route
 * the Nest router serves (put there by `guardWriteRoutes`, which the application module calls),
 * `idempotentFastifyRoutes` for the Fastify routes of their own (Beams publish, uploads), and
 * `storeKeyedAnswers` on the root Fastify instance for both.
 */
@Global()
@Module({
  providers: [IdempotentRequests],
  exports: [IdempotentRequests],
})
export class IdempotencyModule {}

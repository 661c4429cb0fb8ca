import { Global, Module } from '@nestjs/common';
import { IdempotentRequests } from './idempotent-requests';

/**
 * `Idempotency-Key` on every write (docs/idempotency.md): `IdempotencyInterceptor` on each write
 * route the Nest router serves (put there by `interceptWriteRoutes`, which the application module
 * calls), and `IdempotentRequests` for the Fastify routes of their own (Beams publish).
 */
@Global()
@Module({
  providers: [IdempotentRequests],
  exports: [IdempotentRequests],
})
export class IdempotencyModule {}

import { Global, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotentRequests } from './idempotent-requests';

/**
 * `Idempotency-Key` on every write (docs/idempotency.md): one interceptor for the routes the Nest
 * router serves, and `IdempotentRequests` for the Fastify routes of their own (Beams publish).
 */
@Global()
@Module({
  providers: [IdempotentRequests, { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor }],
  exports: [IdempotentRequests],
})
export class IdempotencyModule {}

import { Injectable } from '@nestjs/common';
import passport from 'passport';
import { AccessTokenStrategy, authenticationError, RequestActor, TokenRequest } from './access-token.strategy';

export { unauthorized } from './access-token.strategy';
export type { RequestActor } from './access-token.strategy';

/**
 * Verifies the token of a request that does not come through Nest's router: HTTP SUBSCRIBE
 * and the SUBSCRIBE frames of the WebSocket bridge. It runs the same passport strategy as
 * `AccessTokenGuard`, so there is one verification path (and one verified-token cache).
 */
@Injectable()
export class AccessTokenVerifier {
  constructor(private readonly strategy: AccessTokenStrategy) {}

  async verify(authorization: string | undefined, instanceId: string): Promise<RequestActor> {
    const request: TokenRequest = { headers: { authorization }, params: { instanceId } };
    return (await this.strategy.cached(request)) ?? this.throughPassport(request);
  }

  private throughPassport(request: TokenRequest): Promise<RequestActor> {
    return new Promise((resolve, reject) => {
      const middleware = passport.authenticate(
        this.strategy.name,
        { session: false },
        (error: unknown, actor: RequestActor | false, info: unknown) =>
          actor ? resolve(actor) : reject(authenticationError(error, info)),
      );
      middleware(request, {}, (error?: unknown) => reject(error ?? new Error('authentication ended without an answer')));
    });
  }
}

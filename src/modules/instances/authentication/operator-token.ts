import { Inject, Injectable } from '@nestjs/common';
import jwt from 'jsonwebtoken';
import { createSecretKey, KeyObject } from 'node:crypto';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { consoleUserProblem } from '../../../shared/domain/console-user';
import { forbidden } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { bearerCredential } from '../../../shared/http/bearer';
import { actingInRequest } from '../../../shared/observability/request-context';
import { unauthorized } from './access-token.strategy';
import { tokenLifetimeRefusal, tokenLivesTooLong } from './token-lifetime';

/** The `iss` of a deployment token: what tells it from an instance key's token (`api_keys/<key id>`). */
export const OPERATOR_ISSUER = 'parley_console';
/** A deployment token lives at most an hour from its `iat`: it reaches every instance, so one stolen must die soon. */
export const OPERATOR_TOKEN_MAX_LIFETIME_SECONDS = 3600;
/** The key id deployment-token actions are recorded under (beside `console_user`). */
export const OPERATOR_KEY_ID = 'console';

/** An operator signed in with the deployment credential. */
export interface Operator {
  /** The token's `sub`: the console user, recorded on every event the operator's requests append. */
  readonly name: string;
  readonly issuedAt: number;
}

/** What the audit records for an operator's request: `{key_id: "console", console_user}`, in its request. */
export const operatorActor = (operator: Operator, requestId: string | undefined): Actor =>
  actingInRequest({ key_id: OPERATOR_KEY_ID, console_user: operator.name }, requestId);

/**
 * Verifies the deployment credential (docs/console.md): an HS256 JWT signed with
 * CONSOLE_ADMIN_SECRET, `{iss: "parley_console", sub: <console user>, iat, exp}` with `exp` at
 * most an hour past `iat`. It spans instances, so nothing of an instance's own (its keys, its su
 * tokens) stands in for it. Unset CONSOLE_ADMIN_SECRET: no deployment sign-in at all.
 */
@Injectable()
export class OperatorTokenVerifier {
  private readonly secret: KeyObject | null;

  constructor(@Inject(CONFIG) config: ParleyConfig) {
    this.secret = config.consoleAdminSecret ? createSecretKey(Buffer.from(config.consoleAdminSecret, 'utf8')) : null;
  }

  verify(authorization: string | undefined): Operator {
    if (!this.secret) {
      throw forbidden('operator_sign_in_disabled', 'Deployment sign-in is off on this server: its operator sets CONSOLE_ADMIN_SECRET to turn it on');
    }
    const token = bearerCredential(authorization);
    if (!token) throw unauthorized('missing_token', 'An Authorization header with a deployment token (Bearer) is required');
    const decoded = jwt.decode(token, { json: true });
    if (!decoded) throw unauthorized('invalid_token', 'The credential is not a JWT');
    if (decoded.iss !== OPERATOR_ISSUER) {
      throw unauthorized(
        'operator_token_required',
        `This route takes a deployment token (iss "${OPERATOR_ISSUER}", signed with CONSOLE_ADMIN_SECRET); an instance key's token is not one`,
      );
    }
    let claims: jwt.JwtPayload;
    try {
      claims = jwt.verify(token, this.secret, { algorithms: ['HS256'], issuer: OPERATOR_ISSUER }) as jwt.JwtPayload;
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError) throw unauthorized('token_expired', 'The deployment token has expired: sign in again');
      throw unauthorized('invalid_token', 'The deployment token signature or claims are invalid');
    }
    if (typeof claims.iat !== 'number') throw unauthorized('invalid_token', 'The deployment token has no "iat" claim');
    if (typeof claims.exp !== 'number') throw unauthorized('invalid_token', 'The deployment token has no "exp" claim');
    const tooLong = tokenLifetimeRefusal(claims, OPERATOR_TOKEN_MAX_LIFETIME_SECONDS, Date.now(), 'deployment tokens');
    if (tooLong) throw tokenLivesTooLong(tooLong);
    const badName = consoleUserProblem(claims.sub);
    if (badName) throw unauthorized('invalid_token', `The deployment token's "sub" must name the console user: ${badName}`);
    return { name: claims.sub!, issuedAt: claims.iat };
  }
}

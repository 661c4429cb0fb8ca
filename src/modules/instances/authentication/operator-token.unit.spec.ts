import jwt from 'jsonwebtoken';
import { loadConfig } from '../../../config/config';
import { DomainError } from '../../../shared/domain/errors';
import { OPERATOR_TOKEN_MAX_LIFETIME_SECONDS, operatorActor, OperatorTokenVerifier } from './operator-token';

const SECRET = 'a-deployment-secret-of-at-least-32-chars';
const verifier = new OperatorTokenVerifier(loadConfig({ CONSOLE_ADMIN_SECRET: SECRET }));
const now = () => Math.floor(Date.now() / 1000);
const bearer = (claims: object, secret = SECRET, options: jwt.SignOptions = {}) => `Bearer ${jwt.sign(claims, secret, { algorithm: 'HS256', ...options })}`;
const refusal = (authorization: string | undefined, v = verifier): string => {
  try {
    v.verify(authorization);
  } catch (error) {
    if (error instanceof DomainError) return `${error.status} ${error.code}`;
    throw error;
  }
  throw new Error('accepted');
};

describe('the deployment credential (OperatorTokenVerifier)', () => {
  it('takes an HS256 token of CONSOLE_ADMIN_SECRET naming the console user, living up to an hour', () => {
    const iat = now();
    expect(verifier.verify(bearer({ iss: 'parley_console', sub: 'Ops Alice', iat, exp: iat + OPERATOR_TOKEN_MAX_LIFETIME_SECONDS }))).toEqual({ name: 'Ops Alice', issuedAt: iat });
    expect(operatorActor({ name: 'Ops Alice', issuedAt: iat }, 'req-1')).toEqual({ key_id: 'console', console_user: 'Ops Alice' });
  });

  it('refuses anything else with the reason', () => {
    const iat = now();
    const claims = { iss: 'parley_console', sub: 'ops', iat, exp: iat + 60 };
    expect(refusal(undefined)).toBe('401 unauthorized/missing_token');
    expect(refusal('Basic b3BzOnNlY3JldA==')).toBe('401 unauthorized/missing_token');
    expect(refusal('Bearer not.a.jwt')).toBe('401 unauthorized/invalid_token');
    expect(refusal(bearer({ ...claims, iss: 'api_keys/k1', instance: 'acme', su: true }))).toBe('401 unauthorized/operator_token_required');
    expect(refusal(bearer(claims, 'another-secret-that-is-long-enough-too'))).toBe('401 unauthorized/invalid_token');
    expect(refusal(bearer(claims, SECRET, { algorithm: 'HS384' }))).toBe('401 unauthorized/invalid_token');
    expect(refusal(`Bearer ${jwt.sign(claims, '', { algorithm: 'none' })}`)).toBe('401 unauthorized/invalid_token');
    expect(refusal(bearer({ ...claims, iat: iat - 120, exp: iat - 60 }))).toBe('401 unauthorized/token_expired');
    expect(refusal(bearer({ ...claims, exp: iat + OPERATOR_TOKEN_MAX_LIFETIME_SECONDS + 1 }))).toBe('401 unauthorized/token_lifetime_too_long');
    // A future iat counts from now: it cannot stretch the hour.
    expect(refusal(bearer({ ...claims, iat: iat + 3000, exp: iat + 3000 + 3600 }))).toBe('401 unauthorized/token_lifetime_too_long');
    expect(refusal(bearer({ iss: 'parley_console', sub: 'ops', exp: iat + 60 }, SECRET, { noTimestamp: true }))).toBe('401 unauthorized/invalid_token');
    expect(refusal(bearer({ iss: 'parley_console', sub: 'ops', iat }))).toBe('401 unauthorized/invalid_token');
    for (const sub of [undefined, '', 'a:b', 'x'.repeat(65), 42]) expect(refusal(bearer({ ...claims, sub }))).toBe('401 unauthorized/invalid_token');
  });

  it('takes nothing at all while CONSOLE_ADMIN_SECRET is unset', () => {
    const off = new OperatorTokenVerifier(loadConfig({}));
    const iat = now();
    expect(refusal(bearer({ iss: 'parley_console', sub: 'ops', iat, exp: iat + 60 }), off)).toBe('403 forbidden/operator_sign_in_disabled');
  });
});

import jwt from 'jsonwebtoken';
import { createSecretKey } from 'node:crypto';
import { beamsTokenIssuer, beamsTokenUser, signBeamsToken } from './beams-token';

describe('Beams tokens', () => {
  const key = createSecretKey(Buffer.from('beams-key-secret-0123'));
  const DAY = 86_400;

  it('proves the user of a token as the server SDK signs it (24 h)', () => {
    expect(beamsTokenUser(signBeamsToken('ann', 'inst', key), 'inst', [key], 30 * DAY)).toBe('ann');
  });

  it('refuses a token living longer than the maximum, naming it', () => {
    const now = Math.floor(Date.now() / 1000);
    const forever = jwt.sign({ sub: 'ann', iss: beamsTokenIssuer('inst'), iat: now, exp: Date.UTC(2100, 0, 1) / 1000 }, key, { algorithm: 'HS256' });
    expect(() => beamsTokenUser(forever, 'inst', [key], 30 * DAY)).toThrow(/TOKEN_MAX_LIFETIME_SECONDS/);
    expect(() => beamsTokenUser(signBeamsToken('ann', 'inst', key), 'inst', [key], 3600)).toThrow(expect.objectContaining({ status: 401 }));
  });
});

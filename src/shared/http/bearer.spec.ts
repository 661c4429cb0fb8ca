import { bearerCredential } from './bearer';

describe('bearerCredential', () => {
  it('reads the credential of a Bearer header, whatever the scheme case, trimmed', () => {
    expect(bearerCredential('Bearer abc.def')).toBe('abc.def');
    expect(bearerCredential('bearer   abc  ')).toBe('abc');
    expect(bearerCredential('BEARER x')).toBe('x');
  });

  it('is null without a header, with another scheme, or with nothing after the scheme', () => {
    expect(bearerCredential(undefined)).toBeNull();
    expect(bearerCredential('')).toBeNull();
    expect(bearerCredential('Basic dXNlcjpwYXNz')).toBeNull();
    expect(bearerCredential('Bearer')).toBeNull();
    expect(bearerCredential('Bearer    ')).toBeNull();
    expect(bearerCredential('Bearerabc')).toBeNull();
  });
});

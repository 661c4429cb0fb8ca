import { randomBytes } from 'node:crypto';
import { LinkSigner } from './link-signer';

describe('link signer', () => {
  const signer = new LinkSigner(randomBytes(32));
  const path = '/attachments/download/acme/a1';
  const now = 1_800_000_000;

  it('accepts its own links until they expire', () => {
    const q = signer.sign('GET', path, now + 60);
    expect(signer.check('GET', path, q, now)).toBe('valid');
    expect(signer.check('GET', path, q, now + 60)).toBe('expired');
  });

  it('accepts links without expiry for ever, and only where they were issued without one', () => {
    const q = signer.sign('GET', path, null);
    expect(q).toEqual({ sig: expect.any(String) });
    expect(signer.check('GET', path, q, now * 10)).toBe('valid');
    const expiring = signer.sign('GET', path, now + 60);
    expect(signer.check('GET', path, { sig: expiring.sig }, now)).toBe('invalid');
  });

  it('refuses a changed path, method, expiry or signature, and links of another key', () => {
    const q = signer.sign('GET', path, now + 60);
    expect(signer.check('GET', `${path}x`, q, now)).toBe('invalid');
    expect(signer.check('PUT', path, q, now)).toBe('invalid');
    expect(signer.check('GET', path, { ...q, expires: String(now + 6000) }, now)).toBe('invalid');
    expect(signer.check('GET', path, { ...q, sig: q.sig.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }, now)).toBe('invalid');
    expect(signer.check('GET', path, {}, now)).toBe('invalid');
    expect(signer.check('GET', path, { ...q, expires: ['1', '2'] }, now)).toBe('invalid');
    expect(new LinkSigner(randomBytes(32)).check('GET', path, q, now)).toBe('invalid');
  });

  it('writes the query of a signed path', () => {
    const url = new URL(`http://h${signer.signedPath('PUT', path, now + 5)}`);
    expect(url.pathname).toBe(path);
    expect(signer.check('PUT', path, Object.fromEntries(url.searchParams), now)).toBe('valid');
  });
});

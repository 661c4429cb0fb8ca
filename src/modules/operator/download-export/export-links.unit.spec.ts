import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../../shared/crypto/secret-box';
import { DomainError } from '../../../shared/domain/errors';
import { EXPORT_LINK_TTL_SECONDS, ExportLinks } from './export-links';

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as DomainError).code;
  }
  return 'accepted';
};

describe('export download links', () => {
  let now = new Date('2026-11-27T02:00:00Z');
  const clock = { now: () => now };
  const secretBox = SecretBox.fromBase64(randomBytes(32).toString('base64'));
  const links = new ExportLinks(secretBox, clock);
  const queryOf = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);

  it('takes a link once, for the instance and console user it was minted for', () => {
    const link = links.mint('acme', 'Ops Alice');
    expect(link.expiresAt.getTime() - now.getTime()).toBe(EXPORT_LINK_TTL_SECONDS * 1000);
    expect(refusal(() => links.redeem('other', queryOf(link.url)))).toBe('forbidden/invalid_link');
    expect(refusal(() => links.redeem('acme', { ...queryOf(link.url), by: 'Ops Mallory' }))).toBe('forbidden/invalid_link');
    expect(refusal(() => links.redeem('acme', { ...queryOf(link.url), expires: String(Number(queryOf(link.url).expires) + 3600) }))).toBe('forbidden/invalid_link');
    expect(links.redeem('acme', queryOf(link.url))).toBe('Ops Alice');
    expect(refusal(() => links.redeem('acme', queryOf(link.url)))).toBe('forbidden/link_used');
  });

  it('refuses a link past its minute, and one signed under another master key', () => {
    const link = links.mint('acme', 'Ops Alice');
    now = new Date(now.getTime() + (EXPORT_LINK_TTL_SECONDS + 1) * 1000);
    expect(refusal(() => links.redeem('acme', queryOf(link.url)))).toBe('forbidden/link_expired');
    const elsewhere = new ExportLinks(SecretBox.fromBase64(randomBytes(32).toString('base64')), clock).mint('acme', 'Ops Alice');
    expect(refusal(() => links.redeem('acme', queryOf(elsewhere.url)))).toBe('forbidden/invalid_link');
  });
});

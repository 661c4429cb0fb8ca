import { createHmac } from 'node:crypto';
import { SecretBox } from './secret-box';
import { DerivedDataKeys } from './derived-data-keys';

const box = SecretBox.fromBase64(Buffer.alloc(32, 7).toString('base64'));

describe('DerivedDataKeys', () => {
  it('makes a distinct 32-byte key per id, stores no key bytes, and recovers each key from what is stored', () => {
    const keys = new DerivedDataKeys(box);
    const made = keys.make(['acme/message/1/0', 'acme/message/2/0', 'acme/message/3/0']);
    expect(new Set(made.map((m) => m.key.toString('hex'))).size).toBe(3);
    for (const m of made) {
      expect(m.key).toHaveLength(32);
      expect(m.stored).not.toContain(m.key.toString('base64'));
      expect(Buffer.from(m.stored.slice(3), 'base64').includes(m.key)).toBe(false);
    }
    expect(made.map((m, i) => new DerivedDataKeys(box).recover(`acme/message/${i + 1}/0`, m.stored))).toEqual(made.map((m) => m.key));
  });

  it('makes another key from a stored nonce moved onto another id, and another under another master key', () => {
    const [made] = new DerivedDataKeys(box).make(['acme/message/1/0']);
    expect(new DerivedDataKeys(box).recover('acme/message/2/0', made.stored)).not.toEqual(made.key);
    const other = SecretBox.fromBase64(Buffer.alloc(32, 8).toString('base64'));
    expect(new DerivedDataKeys(other).recover('acme/message/1/0', made.stored)).not.toEqual(made.key);
  });

  it('derives each key as HMAC-SHA256 of its nonce and id under the data-key secret, so keys stored by earlier releases open unchanged', () => {
    const stored = 'd1.' + Buffer.alloc(32, 9).toString('base64');
    const expected = createHmac('sha256', box.deriveKey('data-keys')).update(Buffer.alloc(32, 9)).update('acme/message/1/0', 'utf8').digest();
    expect(new DerivedDataKeys(box).recover('acme/message/1/0', stored)).toEqual(expected);
  });

  it('makes the stored forms of new keys without their keys, each recovered from its own nonce', () => {
    const keys = new DerivedDataKeys(box);
    const stored = keys.storedForms(3);
    expect(new Set(stored).size).toBe(3);
    const recovered = stored.map((s) => keys.recover('acme/message/1/0', s));
    expect(new Set(recovered.map((k) => k.toString('hex'))).size).toBe(3);
  });

  it('opens keys stored sealed under the master key', () => {
    const key = Buffer.alloc(32, 3);
    expect(new DerivedDataKeys(box).recover('acme/message/1/0', JSON.stringify(box.seal(key.toString('base64'))))).toEqual(key);
  });
});

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from './secret-box';

describe('SecretBox', () => {
  it('seals so that the plain secret appears nowhere in the sealed form, and opens it again', () => {
    const box = SecretBox.fromBase64(Buffer.alloc(32, 7).toString('base64'));
    const sealed = box.seal('top-secret-value');
    expect(JSON.stringify(sealed)).not.toContain('top-secret-value');
    expect(box.open(sealed)).toBe('top-secret-value');
    expect(box.seal('top-secret-value').ciphertext).not.toBe(sealed.ciphertext);
  });

  it('refuses a sealed secret under another master key', () => {
    const sealed = SecretBox.fromBase64(Buffer.alloc(32, 1).toString('base64')).seal('s');
    expect(() => SecretBox.fromBase64(Buffer.alloc(32, 2).toString('base64')).open(sealed)).toThrow();
  });

  it('creates the master key file once, readable by its owner only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-key-'));
    const file = join(dir, 'master.key');
    const sealed = SecretBox.createFile(file).seal('s');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const content = readFileSync(file, 'utf8');
    expect(SecretBox.fromFile(file).open(sealed)).toBe('s');
    expect(SecretBox.createFile(file).open(sealed)).toBe('s'); // a second start keeps the first key
    expect(readFileSync(file, 'utf8')).toBe(content);
    rmSync(dir, { recursive: true, force: true });
  });

  it('says whether it is the key a secret was sealed with', () => {
    const sealed = SecretBox.fromBase64(Buffer.alloc(32, 1).toString('base64')).seal('s');
    expect(SecretBox.fromBase64(Buffer.alloc(32, 1).toString('base64')).opens(sealed)).toBe(true);
    expect(SecretBox.fromBase64(Buffer.alloc(32, 2).toString('base64')).opens(sealed)).toBe(false);
  });

  it('rejects a master key of the wrong size', () => {
    expect(() => SecretBox.fromBase64('c2hvcnQ=')).toThrow(/32 bytes/);
  });
});

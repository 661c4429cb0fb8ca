import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { ConfigError } from '../../config/config';
import { openMasterKey } from './master-key';
import { SecretBox } from './secret-box';

const keyOf = (fill: number) => Buffer.alloc(32, fill).toString('base64');

describe('openMasterKey', () => {
  let dataDir: string;
  let log: SqliteEventStore;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-master-key-'));
    log = new SqliteEventStore(join(dataDir, 'events.sqlite'));
  });
  afterEach(async () => {
    await log.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A key created the way the instances context records it: its secret sealed with `box`. */
  const recordKey = (box: SecretBox) =>
    log.append(
      'instance-acme.acme',
      [{ type: 'KeyCreated', data: { key_id: 'k', secret: box.seal('s'), created_at: '' }, metadata: { occurred_at: '' } }],
      'any',
    );
  const keyFile = () => join(dataDir, 'master.key');

  it('creates master.key on a log that holds no key secret yet, and reads it on the next start', async () => {
    await log.append('instance-acme.acme', [{ type: 'InstanceCreated', data: {}, metadata: { occurred_at: '' } }], 'any');
    const box = await openMasterKey({ dataDir }, log);
    const sealed = box.seal('s');
    expect(existsSync(keyFile())).toBe(true);
    expect((await openMasterKey({ dataDir }, log)).open(sealed)).toBe('s');
  });

  it('accepts MASTER_KEY and master.key when they open the stored secrets', async () => {
    await recordKey(SecretBox.fromBase64(keyOf(1)));
    expect((await openMasterKey({ dataDir, masterKey: keyOf(1) }, log)).open(SecretBox.fromBase64(keyOf(1)).seal('x'))).toBe('x');
    writeFileSync(keyFile(), keyOf(1) + '\n');
    await expect(openMasterKey({ dataDir }, log)).resolves.toBeInstanceOf(SecretBox);
  });

  it('refuses a MASTER_KEY that does not open the stored secrets, naming MASTER_KEY', async () => {
    await recordKey(SecretBox.fromBase64(keyOf(1)));
    const attempt = openMasterKey({ dataDir, masterKey: keyOf(2) }, log);
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(openMasterKey({ dataDir, masterKey: keyOf(2) }, log)).rejects.toThrow(
      /^MASTER_KEY is not the master key the event log's key secrets were sealed with/,
    );
    expect(existsSync(keyFile())).toBe(false);
  });

  it('refuses a master.key that does not open the stored secrets, naming MASTER_KEY and the file', async () => {
    await recordKey(SecretBox.fromBase64(keyOf(1)));
    writeFileSync(keyFile(), keyOf(2) + '\n');
    await expect(openMasterKey({ dataDir }, log)).rejects.toThrow(
      `MASTER_KEY is not set and ${keyFile()} is not the master key the event log's key secrets were sealed with`,
    );
    expect(readFileSync(keyFile(), 'utf8')).toBe(keyOf(2) + '\n');
  });

  it('never generates a key beside sealed secrets whose key is missing', async () => {
    await recordKey(SecretBox.fromBase64(keyOf(1)));
    await expect(openMasterKey({ dataDir }, log)).rejects.toThrow(/MASTER_KEY is not set and .*master\.key does not exist/);
    expect(existsSync(keyFile())).toBe(false);
  });
});

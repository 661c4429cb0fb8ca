import jwt from 'jsonwebtoken';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { rawRequest } from '../support/raw-request';
import { makeTar } from '../support/tar-files';
import { startTestServer, TestServer } from '../support/test-server';
import { describeAsRoot, mountTmpfs } from '../support/volumes';

const SECRET = 'the-deployment-admin-secret-of-this-test-0123456789';
const OPERATOR = '/services/parley_operator/v1';
const operatorToken = () => {
  const iat = Math.floor(Date.now() / 1000);
  return jwt.sign({ iss: 'parley_console', sub: 'Ops Full', iat, exp: iat + 900 }, SECRET, { algorithm: 'HS256' });
};

/** The transfer spool (DATA_DIR/transfer-spool) on a 64 KiB tmpfs: exports and imports that need more are refused 503, nothing kept. */
describeAsRoot('the operator API with a full transfer spool', () => {
  let s: TestServer;
  let spool: string;

  beforeAll(async () => {
    s = await startTestServer({ env: { CONSOLE_ENABLED: 'true', CONSOLE_ADMIN_SECRET: SECRET } });
    spool = join(s.dataDir, 'transfer-spool');
    mkdirSync(spool, { recursive: true });
    mountTmpfs(spool, '64k');
  });
  afterAll(async () => {
    execFileSync('umount', [spool]);
    await s.close();
  });

  it('an import larger than the spool has room for: 503 spool_full, nothing left in the spool', async () => {
    const archive = await makeTar([{ name: 'blobs.ndjson', data: Buffer.alloc(200 * 1024, 'x') }, { name: 'manifest.json', data: '{}' }]);
    const res = await rawRequest(s.baseUrl, 'POST', `${OPERATOR}/instances/${s.instanceId}/import`, archive, { authorization: `Bearer ${operatorToken()}` });
    expect([res.status, res.json.error]).toEqual([503, 'services/parley_operator/unavailable/spool_full']);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('an export larger than the spool has room for: 503 spool_full, nothing left in the spool', async () => {
    const bytes = Buffer.alloc(200 * 1024, 'y');
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'filler', name: 'Filler' } })).status).toBe(201);
    const created = await s.request('POST', s.chat('/rooms'), { token: s.token({ sub: 'filler' }), body: { id: 'big', name: 'big' } });
    expect(created.status).toBe(201);
    const attachment = await s.request('POST', s.chat('/rooms/big/attachments'), {
      token: s.token({ sub: 'filler' }),
      body: { content_type: 'application/octet-stream', content_length: bytes.length, name: 'big.bin' },
    });
    expect(attachment.status).toBe(201);
    expect((await rawRequest('', 'PUT', attachment.body.upload_url, bytes)).status).toBe(204);
    const link = await s.request('POST', `${OPERATOR}/instances/${s.instanceId}/export/links`, { token: operatorToken() });
    expect(link.status).toBe(201);
    const res = await rawRequest(s.baseUrl, 'GET', link.body.url);
    expect([res.status, res.json.error]).toEqual([503, 'services/parley_operator/unavailable/spool_full']);
    expect(readdirSync(spool)).toEqual([]);
  });
});

import jwt from 'jsonwebtoken';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { EVENT_STORE, EventStore } from '../../src/shared/ports/event-store.port';
import { rawRequest } from '../support/raw-request';
import { makeTar, untar } from '../support/tar-files';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

const SECRET = 'the-deployment-admin-secret-of-this-test-0123456789';
const OPERATOR = '/services/parley_operator/v1';
const INSTANCE = 'moving';
const ATTACHMENT_BYTES = Buffer.from(JSON.stringify({ moved: true, text: 'héllo ✓' }));
const CAP = 200_000;

const operatorToken = (sub = 'Ops Mover') => {
  const iat = Math.floor(Date.now() / 1000);
  return jwt.sign({ iss: 'parley_console', sub, iat, exp: iat + 900 }, SECRET, { algorithm: 'HS256' });
};
const instanceToken = (key: { id: string; secret: string }, claims: Record<string, unknown> = { su: true }) =>
  jwt.sign({ instance: INSTANCE, iss: `api_keys/${key.id}`, ...claims }, key.secret, { algorithm: 'HS256', expiresIn: 600 });

const spoolOf = (s: TestServer) => {
  const dir = join(s.dataDir, 'transfer-spool');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('export to disk and import over HTTP (services/parley_operator/v1, CONSOLE_ENABLED=true)', () => {
  const masterKey = randomBytes(32).toString('base64');
  const env = (extra: Record<string, string> = {}) => ({ CONSOLE_ENABLED: 'true', CONSOLE_ADMIN_SECRET: SECRET, MASTER_KEY: masterKey, IMPORT_MAX_BYTES: String(CAP), ...extra });
  let source: TestServer;
  let target: TestServer;
  let key: { id: string; secret: string };
  let archive: Buffer;
  let messageId: number;

  const op = (s: TestServer, method: string, path: string, body?: unknown, token: string | null = operatorToken()) => s.request(method, OPERATOR + path, { body, token });
  const importArchive = (s: TestServer, bytes: Buffer, token: string | null = operatorToken(), instance = INSTANCE) =>
    rawRequest(s.baseUrl, 'POST', `${OPERATOR}/instances/${instance}/import`, bytes, {
      'content-type': 'application/x-tar',
      ...(token && { authorization: `Bearer ${token}` }),
    });
  const finished = async (s: TestServer, id: string, instance = INSTANCE) =>
    eventually(
      async () => {
        const res = await op(s, 'GET', `/instances/${instance}/imports/${id}`);
        expect(res.status).toBe(200);
        return ['done', 'failed'].includes(res.body.status) && res.body;
      },
      { what: `the import ${id} to end` },
    );

  beforeAll(async () => {
    source = await startTestServer({ env: env() });
    target = await startTestServer({ env: env() });
    const created = await op(source, 'POST', '/instances', { id: INSTANCE });
    expect(created.status).toBe(201);
    key = created.body.key;
    const su = instanceToken(key);
    const as = (sub: string) => instanceToken(key, { sub });
    const chat = (path: string) => `/services/chatkit/v6/${INSTANCE}${path}`;
    expect((await source.request('POST', chat('/batch_users'), { body: { users: [{ id: 'alice', name: 'Alice' }, { id: 'bob', name: 'Bob' }] }, token: su })).status).toBe(201);
    expect((await source.request('POST', chat('/rooms'), { body: { id: 'general', name: 'general', user_ids: ['bob'] }, token: as('alice') })).status).toBe(201);
    const attachment = await source.request('POST', chat('/rooms/general/attachments'), {
      body: { content_type: 'application/json', content_length: ATTACHMENT_BYTES.length, name: 'data.json' },
      token: as('alice'),
    });
    expect(attachment.status).toBe(201);
    expect((await rawRequest('', 'PUT', attachment.body.upload_url, ATTACHMENT_BYTES, { 'content-type': 'application/json' })).status).toBe(204);
    const sent = await source.request('POST', chat('/rooms/general/messages'), {
      body: { parts: [{ type: 'text/plain', content: 'see attached' }, { type: 'application/json', attachment: { id: attachment.body.attachment_id } }] },
      token: as('alice'),
    });
    expect(sent.status).toBe(201);
    messageId = sent.body.message_id;
  });
  afterAll(async () => {
    await source?.close();
    await target?.close();
  });

  it('export: a one-use link for a minute, followed without Authorization, downloads a tar of everything npm run export writes, recorded first', async () => {
    const minted = await op(source, 'POST', `/instances/${INSTANCE}/export/links`, undefined, operatorToken('Ops Exporter'));
    expect(minted.status).toBe(201);
    expect(minted.body).toEqual({ url: expect.stringMatching(new RegExp(`^${OPERATOR}/instances/${INSTANCE}/export/archive\\?`)), expires_at: expect.any(String) });
    const lifetime = Date.parse(minted.body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(0);
    expect(lifetime).toBeLessThanOrEqual(60_000);

    // Altered, or for another instance: refused before anything is recorded.
    const altered = minted.body.url.replace('by=Ops+Exporter', 'by=Ops+Mallory');
    expect((await rawRequest(source.baseUrl, 'GET', altered)).json.error).toBe('services/parley_operator/forbidden/invalid_link');
    const elsewhere = minted.body.url.replace(`/instances/${INSTANCE}/`, `/instances/${source.instanceId}/`);
    expect((await rawRequest(source.baseUrl, 'GET', elsewhere)).json.error).toBe('services/parley_operator/forbidden/invalid_link');
    expect((await rawRequest(source.baseUrl, 'GET', minted.body.url.split('?')[0])).status).toBe(403);

    // A HEAD (a link preview) neither spends the link nor exports anything.
    expect((await rawRequest(source.baseUrl, 'HEAD', minted.body.url)).status).toBe(405);

    const res = await rawRequest(source.baseUrl, 'GET', minted.body.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="parley-export-${INSTANCE}-[^"]+\\.tar"$`));
    archive = res.bytes;
    // Once only.
    expect((await rawRequest(source.baseUrl, 'GET', minted.body.url)).json.error).toBe('services/parley_operator/forbidden/link_used');

    const files = await untar(archive);
    const names = [...files.keys()];
    expect(names[names.length - 1]).toBe('manifest.json');
    expect(names).toEqual(expect.arrayContaining(['events.ndjson', 'blobs.ndjson', 'manifest.json']));
    const manifest = JSON.parse(files.get('manifest.json')!.toString());
    expect(manifest).toMatchObject({ format: 'parley-instance-export', instance_id: INSTANCE, complete: true });
    const events = files.get('events.ndjson')!.toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(manifest.events).toBe(events.length);
    // Recorded before any of it was read: the export holds its own record, with the console user.
    expect(events[events.length - 1]).toMatchObject({ type: 'InstanceExported', metadata: { actor: { key_id: 'console', console_user: 'Ops Exporter' } } });
    const [blob] = files.get('blobs.ndjson')!.toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(files.get(`blobs/${blob.key}`)).toEqual(ATTACHMENT_BYTES);
    expect(spoolOf(source)).toEqual([]);

    expect((await op(source, 'POST', '/instances/never-made/export/links')).status).toBe(404);
  });

  it('import: into a fresh data directory as a job, read back as the source answers, attachment bytes included, recorded with the console user; the spool is gone', async () => {
    const res = await importArchive(target, archive, operatorToken('Ops Importer'));
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ id: expect.any(String), instance_id: INSTANCE, status: 'checking', received_bytes: archive.length });
    expect(res.headers.get('location')).toBe(`${OPERATOR}/instances/${INSTANCE}/imports/${res.json.id}`);
    const job = await finished(target, res.json.id);
    expect(job).toMatchObject({ status: 'done', events_total: expect.any(Number), blobs_total: 1, events_present: 0, blobs_copied: 1, blobs_present: 0 });
    expect(job.events_appended).toBe(job.events_total);
    expect(spoolOf(target)).toEqual([]);

    // The imported key works on the target; reads answer as on the source once its projectors caught up.
    const su = instanceToken(key);
    const reads = [`/services/chatkit/v6/${INSTANCE}/users`, `/services/chatkit/v6/${INSTANCE}/rooms/general`];
    for (const path of reads) {
      const there = await source.request('GET', path, { token: su });
      const here = await eventually(async () => {
        const r = await target.request('GET', path, { token: su });
        return JSON.stringify(r.body) === JSON.stringify(there.body) && r;
      }, { what: `${path} to answer as on the source` });
      expect(here).toMatchObject({ status: 200, body: there.body });
    }
    const messages = `/services/chatkit/v6/${INSTANCE}/rooms/general/messages`;
    const read = await eventually(async () => {
      const r = await target.request('GET', messages, { token: instanceToken(key, { sub: 'alice' }) });
      return r.status === 200 && r.body.length === 1 && r.body[0];
    });
    expect(read.id).toBe(messageId);
    // Who imported it is in the log, after the imported history (whose events keep their own actors).
    const byConsole = await eventually(async () => {
      const r = await target.request('GET', `/services/parley_audit/v1/${INSTANCE}/actors/key:console`, { token: su });
      return r.body?.events?.some((e: any) => e.type === 'InstanceImported') && r.body.events;
    });
    expect(byConsole.filter((e: any) => e.type === 'InstanceImported')).toEqual([
      expect.objectContaining({
        actor: { key_id: 'console', console_user: 'Ops Importer' },
        data: expect.objectContaining({ import_id: res.json.id, outcome: 'done', events_appended: job.events_total, blobs_copied: 1, exported_from: 'the operator API' }),
      }),
    ]);
    const attachmentPart = read.parts.find((p: any) => p.attachment);
    const download = await rawRequest('', 'GET', attachmentPart.attachment.download_url);
    expect(download.status).toBe(200);
    expect(download.bytes).toEqual(ATTACHMENT_BYTES);
  });

  it('a second import changes nothing: everything is found already there', async () => {
    const log = target.server.app.get<EventStore>(EVENT_STORE);
    const before = (await log.readAll({ after: null, maxCount: 100_000 })).length;
    const res = await importArchive(target, archive);
    expect(res.status).toBe(202);
    const job = await finished(target, res.json.id);
    expect(job).toMatchObject({ status: 'done', events_appended: 0, blobs_copied: 0, blobs_present: 1 });
    expect(job.events_present).toBe(job.events_total);
    expect((await log.readAll({ after: null, maxCount: 100_000 })).length).toBe(before);
  });

  it('a server with another master key refuses the import and writes nothing; an archive of another instance likewise', async () => {
    const other = await startTestServer({ env: env({ MASTER_KEY: randomBytes(32).toString('base64') }) });
    try {
      const log = other.server.app.get<EventStore>(EVENT_STORE);
      const before = (await log.readAll({ after: null, maxCount: 100_000 })).length;
      const res = await importArchive(other, archive);
      expect(res.status).toBe(202);
      const job = await finished(other, res.json.id);
      expect(job).toMatchObject({ status: 'failed', events_appended: 0, blobs_copied: 0, error: { error: 'services/parley_operator/unprocessable_entity/wrong_master_key' } });
      expect(job.error.error_description).toMatch(/master key.*Nothing was written/);
      expect((await log.readAll({ after: null, maxCount: 100_000 })).length).toBe(before);
      expect((await log.readStream(`instance-${INSTANCE}`, { maxCount: 1 })).length).toBe(0);
      expect(spoolOf(other)).toEqual([]);

      const wrong = await importArchive(other, archive, operatorToken(), 'someone-else');
      const wrongJob = await finished(other, wrong.json.id, 'someone-else');
      expect(wrongJob.status).toBe('failed');
      expect(wrongJob.error.error).toBe('services/parley_operator/unprocessable_entity/wrong_instance');
      expect((await log.readAll({ after: null, maxCount: 100_000 })).length).toBe(before);
    } finally {
      await other.close();
    }
  });

  it('refuses strangers: no token, an instance su token, a bad deployment token; a job of one instance is not found under another', async () => {
    const su = instanceToken(key);
    const forged = jwt.sign({ iss: 'parley_console', sub: 'Mallory', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60 }, 'not-the-secret-at-all-0123456789abcdef', { algorithm: 'HS256' });
    for (const token of [null, su, forged]) {
      const imported = await importArchive(target, archive, token);
      expect(imported.status).toBe(401);
      expect(imported.json.error).toMatch(/^services\/parley_operator\/unauthorized\//);
      expect((await op(source, 'POST', `/instances/${INSTANCE}/export/links`, undefined, token)).status).toBe(401);
      expect((await op(target, 'GET', `/instances/${INSTANCE}/imports/anything`, undefined, token)).status).toBe(401);
    }
    expect(spoolOf(target)).toEqual([]);
    const res = await importArchive(target, archive);
    await finished(target, res.json.id);
    expect((await op(target, 'GET', `/instances/${target.instanceId}/imports/${res.json.id}`)).status).toBe(404);
  });

  it('over IMPORT_MAX_BYTES: 413 whether declared or streamed, nothing spooled or written', async () => {
    const log = target.server.app.get<EventStore>(EVENT_STORE);
    const before = (await log.readAll({ after: null, maxCount: 100_000 })).length;
    const big = await makeTar([{ name: 'blobs.ndjson', data: randomBytes(CAP) }, { name: 'manifest.json', data: '{}' }]);
    const declared = await importArchive(target, big);
    expect(declared.status).toBe(413);
    expect(declared.json.error).toBe('services/parley_operator/payload_too_large/archive_too_large');

    // Chunked (no Content-Length): refused as the count passes the cap.
    const streamed = await fetch(`${target.baseUrl}${OPERATOR}/instances/${INSTANCE}/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorToken()}`, 'content-type': 'application/x-tar' },
      body: Readable.toWeb(Readable.from([big.subarray(0, CAP / 2), big.subarray(CAP / 2)])) as any,
      duplex: 'half',
    } as RequestInit).catch((error: Error) => error);
    if (streamed instanceof Error) throw streamed;
    expect(streamed.status).toBe(413);
    expect(spoolOf(target)).toEqual([]);
    expect((await log.readAll({ after: null, maxCount: 100_000 })).length).toBe(before);
  });

  it('refuses what is no export archive (400, nothing written): not a tar, an entry outside an export', async () => {
    for (const body of [Buffer.from('{"not":"a tar"}'.repeat(100)), await makeTar([{ name: '../escape.txt', data: 'x' }, { name: 'manifest.json', data: '{}' }])]) {
      const res = await importArchive(target, body);
      expect(res.status).toBe(400);
      expect(res.json.error).toBe('services/parley_operator/bad_request/bad_archive');
    }
    const noManifest = await importArchive(target, await makeTar([{ name: 'events.ndjson' }]));
    expect(noManifest.status).toBe(202);
    expect((await finished(target, noManifest.json.id)).error.error).toBe('services/parley_operator/unprocessable_entity/bad_export');
    expect(existsSync(join(target.dataDir, 'escape.txt'))).toBe(false);
    expect(spoolOf(target)).toEqual([]);
  });
});

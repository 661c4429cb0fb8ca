import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FsBlobStore } from '../../src/adapters/blobs/fs/fs-blob-store';
import { chat, eventually, FaultLab, INSTANCE, processEnv } from './process-client';

/**
 * Blobs no attachment refers to, as `kill -9` during uploads leaves them (the bytes stored, the
 * event never appended; a temporary of a put cut short), are removed by the orphan blob sweep
 * of a real server once older than ORPHAN_BLOB_GRACE_MS; a referenced blob and a fresh
 * unreferenced one (an upload whose event may still come) stay. The blobs are aged with utimes
 * rather than by waiting out the grace.
 */
describe('the orphan blob sweep on a real server and data directory', () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('removes old blobs no event refers to and old unfinished uploads, and keeps referenced and fresh ones', async () => {
    const dataDir = lab.dataDir();
    // Ten minutes of grace: the blobs written just before the start are fresh for the whole test.
    const env = processEnv(dataDir, { ORPHAN_BLOB_GRACE_MS: '600000' });
    const first = await lab.start('dist/src/main.js', env);
    expect((await chat(first.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(first.port, 'POST', '/rooms', { id: 'r1', name: 'r1' }, { sub: 'ann' })).status).toBe(201);
    const bytes = Buffer.from('{"kept":true}');
    const announced = await chat(first.port, 'POST', '/rooms/r1/attachments', { content_type: 'application/json', content_length: bytes.length }, { sub: 'ann' });
    expect(announced.status).toBe(201);
    const attachmentId: string = announced.body.attachment_id;
    const upload = new URL(announced.body.upload_url);
    const put = await fetch(`http://127.0.0.1:${first.port}${upload.pathname}${upload.search}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: bytes,
    });
    expect(put.status).toBe(204);
    await first.stop('SIGKILL');

    // What uploads cut by kill -9 leave, written through the store the server uses.
    const blobsDir = join(dataDir, 'blobs');
    const [referenced] = readdirSync(join(blobsDir, INSTANCE, attachmentId)).map((name) => `${INSTANCE}/${attachmentId}/${name}`);
    const store = await FsBlobStore.open(blobsDir);
    const orphan = `${INSTANCE}/${randomUUID()}/${randomUUID()}`;
    const orphanOfReferenced = `${INSTANCE}/${attachmentId}/${randomUUID()}`; // a second put for the attachment, never recorded
    const fresh = `${INSTANCE}/${randomUUID()}/${randomUUID()}`;
    const foreign = 'backups/not-an-upload'; // a key of another shape: not the sweep's to judge
    for (const key of [orphan, orphanOfReferenced, fresh, foreign]) await store.put(key, Buffer.from(key), { contentType: 'text/plain' });
    mkdirSync(join(blobsDir, '.tmp'), { recursive: true });
    const partial = join(blobsDir, '.tmp', `${randomUUID()}.part`);
    writeFileSync(partial, 'half an upload');
    const hourAgo = new Date(Date.now() - 3600_000);
    for (const key of [referenced, orphan, orphanOfReferenced, foreign]) utimesSync(join(blobsDir, ...key.split('/')), hourAgo, hourAgo);
    utimesSync(partial, hourAgo, hourAgo);

    const second = await lab.start('dist/src/main.js', env);
    let output = '';
    second.child.stdout!.on('data', (chunk) => (output += String(chunk)));
    // The pass at start reports what it removed once it has judged every blob.
    expect(await eventually(async () => /removed 2 blob\(s\) no attachment refers to and 1 unfinished upload/.test(output), 20_000)).toBe(true);

    expect(await store.exists(orphan)).toBe(false);
    expect(await store.exists(orphanOfReferenced)).toBe(false);
    expect(existsSync(partial)).toBe(false);
    expect(await store.exists(referenced)).toBe(true);
    expect(await store.exists(fresh)).toBe(true);
    expect(await store.exists(foreign)).toBe(true);

    // The referenced attachment still serves its bytes.
    const got = await chat(second.port, 'GET', `/rooms/r1/attachments/${attachmentId}`, undefined, { sub: 'ann' });
    expect(got.status).toBe(200);
    const download = new URL(got.body.download_url);
    const served = await fetch(`http://127.0.0.1:${second.port}${download.pathname}${download.search}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(bytes);
  });

  it('keeps the bytes of an upload answered 503 "saved, not yet shown", and removes nothing while the attachments read model lags the log', async () => {
    const dataDir = lab.dataDir();
    const env = processEnv(dataDir, { ORPHAN_BLOB_GRACE_MS: '600000', READ_YOUR_WRITES_TIMEOUT_MS: '1000', PROJECTION_LEASE_TTL_MS: '1000' });
    const worker = await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', env);
    expect((await chat(api.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(api.port, 'POST', '/rooms', { id: 'r1', name: 'r1' }, { sub: 'ann' })).status).toBe(201);
    const bytes = Buffer.from('recorded, not yet folded');
    const announced = await chat(api.port, 'POST', '/rooms/r1/attachments', { content_type: 'text/plain', content_length: bytes.length }, { sub: 'ann' });
    expect(announced.status).toBe(201);
    const attachmentId: string = announced.body.attachment_id;
    // No worker folds the upload's event: it is in the log, and the read model never shows it.
    await worker.stop('SIGKILL');
    const upload = new URL(announced.body.upload_url);
    const put = await fetch(`http://127.0.0.1:${api.port}${upload.pathname}${upload.search}`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: bytes });
    expect(put.status).toBe(503); // saved, not folded: the bytes must stay
    await api.stop('SIGKILL');

    const blobsDir = join(dataDir, 'blobs');
    const [recorded] = readdirSync(join(blobsDir, INSTANCE, attachmentId)).map((name) => `${INSTANCE}/${attachmentId}/${name}`);
    const hourAgo = new Date(Date.now() - 3600_000);
    utimesSync(join(blobsDir, ...recorded.split('/')), hourAgo, hourAgo);

    const alone = await lab.start('dist/src/main.api.js', env);
    let output = '';
    alone.child.stdout!.on('data', (chunk) => (output += String(chunk)));
    alone.child.stderr!.on('data', (chunk) => (output += String(chunk)));
    expect(await eventually(async () => /the orphan blob sweep did not finish/.test(output), 20_000)).toBe(true);
    expect(output).not.toMatch(/removed \d+ blob\(s\)/);
    const store = await FsBlobStore.open(blobsDir);
    expect(await store.exists(recorded)).toBe(true);
  });
});

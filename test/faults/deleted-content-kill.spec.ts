import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { rawRequest } from '../support/raw-request';
import { chat, FaultLab, health, processEnv } from './process-client';
import { eventually } from '../support/waiting';

const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

/**
 * kill -9 right after deletes are answered: what the deletes removed is not in the read
 * models' files the dead process left (WAL included), nor after the restart; the bytes of a
 * deleted message's attachment, which the dead process may not have swept yet, are removed by
 * the restarted one.
 */
describe('deleted content across a kill -9 of the embedded server', () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('stays gone from read-models.sqlite* and blobs/, before and after the restart', async () => {
    const dir = lab.dataDir();
    const env = processEnv(dir);
    let server = await lab.start('dist/src/main.js', env);
    const deleted = {
      text: marker('deleted-text'),
      userName: marker('deleted-user'),
      roomName: marker('deleted-room'),
      bytes: marker('attachment-bytes'),
      attachmentName: marker('attachment-name'),
    };
    const kept = marker('kept-text');

    expect((await chat(server.port, 'POST', '/users', { id: 'ann', name: 'ann' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/users', { id: 'ben', name: deleted.userName, custom_data: { k: deleted.userName } })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/rooms', { id: 'r1', name: 'r1' }, { sub: 'ann' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/rooms', { id: 'r2', name: deleted.roomName }, { sub: 'ann' })).status).toBe(201);
    const bytes = Buffer.from(deleted.bytes);
    const announced = await chat(server.port, 'POST', '/rooms/r1/attachments', { content_type: 'text/plain', content_length: bytes.length, name: deleted.attachmentName }, { sub: 'ann' });
    expect(announced.status).toBe(201);
    expect((await rawRequest('', 'PUT', announced.body.upload_url, bytes, { 'content-type': 'text/plain' })).status).toBe(204);
    const send = (parts: unknown[]) => chat(server.port, 'POST', '/rooms/r1/messages', { parts }, { sub: 'ann' });
    const withAttachment = await send([{ type: 'text/plain', content: deleted.text }, { type: 'text/plain', attachment: { id: announced.body.attachment_id } }]);
    expect(withAttachment.status).toBe(201);
    expect((await send([{ type: 'text/plain', content: kept }])).status).toBe(201);

    expect((await chat(server.port, 'DELETE', `/rooms/r1/messages/${withAttachment.body.message_id}`)).status).toBe(204);
    expect((await chat(server.port, 'DELETE', '/users/ben')).status).toBe(204);
    expect((await chat(server.port, 'DELETE', '/rooms/r2')).status).toBe(204);
    await server.stop('SIGKILL');

    const readModels = ['read-models.sqlite', 'search.sqlite'].flatMap((file) => ['', '-wal', '-shm'].map((suffix) => join(dir, `${file}${suffix}`)));
    const inReadModels = (markers: string[]) => scanForMarkers({ files: readModels }, markers);
    expect(inReadModels([deleted.text, deleted.userName, deleted.roomName, deleted.attachmentName])).toEqual([]);
    expect(inReadModels([kept]).length).toBeGreaterThan(0);

    server = await lab.start('dist/src/main.js', env);
    await eventually(async () => (await health(server.port)).status === 200, { what: 'the restarted server healthy' });
    await eventually(() => scanForMarkers({ folders: [join(dir, 'blobs')], files: readModels }, Object.values(deleted)).length === 0, {
      what: 'the deleted attachment swept by the restarted server',
      everyMs: 100,
    });
    expect((await chat(server.port, 'GET', '/rooms/r1/messages')).body.map((m: { parts: { content?: string }[] }) => m.parts[0].content)).toEqual([kept]);
    await server.stop();
    expect(inReadModels(Object.values(deleted))).toEqual([]);
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instanceCalls } from '../support/instance-calls';
import { scanForMarkers } from '../support/byte-scan';
import { freshExport } from '../support/fresh-export';
import { rawRequest } from '../support/raw-request';
import { ServerProcess, startProcess } from '../support/server-process';
import { eventually } from '../support/waiting';

/**
 * Deleting means gone, for rooms and attachments: a real server from dist/ on the embedded
 * default; rooms and attachments (v6 and files API uploads) whose names, custom data, push
 * titles and bytes carry markers; then their deletes. A byte scan of every file under DATA_DIR
 * (the log, the key store, the read models, blobs/, WAL files included, while running and
 * after a stop), a fresh export, the audit API and the other API answers, and the server's
 * output finds none of the deleted markers; every marker not deleted is still read.
 */
const INSTANCE = 'shred-rooms';
const KEY = 'shred-rooms-key:shred-rooms-secret-7d41c09b';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

let dataDir: string;
let server: ServerProcess;
const { as, call, v6, audit } = instanceCalls(INSTANCE, KEY, () => server.port);
const raw = (method: string, url: string, body?: Buffer, headers: Record<string, string> = {}) => rawRequest(`http://127.0.0.1:${server.port}`, method, url, body, headers);
const files = (room: string) => `/services/chatkit_files/v1/${INSTANCE}/rooms/${room}`;

/** An attachment or file, and the markers its name, custom data and bytes carry. */
interface Upload {
  readonly id: string;
  readonly markers: readonly string[];
}

/** A v6 attachment (announced with a name and custom data, then uploaded), carried by a message when `send`. */
async function attach(room: string, user: string, send: boolean): Promise<Upload & { messageId?: number }> {
  const markers = [marker('attachment-name'), marker('attachment-custom-data'), marker('attachment-bytes')];
  const bytes = Buffer.from(JSON.stringify({ secret: markers[2] }));
  const created = await call('POST', v6(`/rooms/${room}/attachments`), {
    body: { content_type: 'application/json', content_length: bytes.length, name: `${markers[0]}.json`, custom_data: { note: markers[1] } },
    as: as(user),
  });
  expect((await raw('PUT', created.body.upload_url, bytes, { 'content-type': 'application/json' })).status).toBe(204);
  const id = created.body.attachment_id as string;
  if (!send) return { id, markers };
  const parts = [{ type: 'text/plain', content: 'see attached' }, { type: 'application/json', attachment: { id } }];
  const messageId = (await call('POST', v6(`/rooms/${room}/messages`), { body: { parts }, as: as(user) })).body.message_id as number;
  return { id, markers, messageId };
}

/** A files API upload (v2 data attachments), named and filled with markers. */
async function uploadFile(room: string, user: string): Promise<Upload & { fileName: string }> {
  const [fileName, bytes] = [marker('file-name'), marker('file-bytes')];
  const boundary = 'b0undary';
  const form = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: text/plain\r\n\r\n${bytes}\r\n--${boundary}--\r\n`,
  );
  const uploaded = await raw('POST', `${files(room)}/users/${user}/files/${fileName}`, form, {
    'content-type': `multipart/form-data; boundary=${boundary}`,
    authorization: `Bearer ${as(user)}`,
  });
  expect(uploaded.status).toBe(200);
  return { id: '', fileName, markers: [fileName, bytes] };
}

/** Every answer a client or an operator reads rooms and attachments through. */
async function answers(rooms: readonly string[]): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  const paths = [
    v6('/rooms'),
    v6('/users/alice/rooms'),
    audit('/actors/alice?limit=1000'),
    audit('/actors/bob?limit=1000'),
    ...rooms.flatMap((room) => [v6(`/rooms/${room}`), v6(`/rooms/${room}/messages?limit=100`), audit(`/rooms/${room}?limit=1000`)]),
  ];
  // What is gone answers 404: its answer is scanned all the same.
  for (const path of paths) texts[path] = (await call('GET', path, { anyStatus: true })).text;
  return texts;
}

/** Everything an operator can look through: every file under DATA_DIR, a fresh export, the API's answers, the server's output. */
async function everywhere(rooms: readonly string[]): Promise<{ exported: string; scan: (markers: readonly string[]) => ReturnType<typeof scanForMarkers> }> {
  const exported = (await freshExport(dataDir, INSTANCE)).folder;
  const texts = { ...(await answers(rooms)), output: server.output.join('\n') };
  return { exported, scan: (markers) => scanForMarkers({ folders: [dataDir, exported], texts }, markers) };
}

/** The room's audit history: its own events and its attachments'. */
const roomHistory = async (room: string) =>
  JSON.parse((await call('GET', audit(`/rooms/${room}?limit=1000`))).text).events as { type: string; data: { id?: string; erased?: boolean; name?: string } }[];

/** The blob janitor has swept: the markers are gone from blobs/ and from the room's audit (AttachmentBlobRemoved destroyed the attachments' keys). */
async function swept(markers: readonly string[], room: string): Promise<boolean> {
  return scanForMarkers({ folders: [join(dataDir, 'blobs')], texts: { history: JSON.stringify(await roomHistory(room)) } }, markers).length === 0;
}

const logFiles = () => ['events.sqlite', 'events.sqlite-wal', 'keys.sqlite', 'keys.sqlite-wal'].map((f) => join(dataDir, f));

describe('deleted rooms and attachments are shredded from every surface (crypto-shredding)', () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-shred-rooms-'));
    server = await startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${INSTANCE}`, INSTANCE_KEY: KEY, MASTER_KEY: '' });
    await call('POST', v6('/batch_users'), { body: { users: ['alice', 'bob', 'cat'].map((id) => ({ id, name: id })) } });
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const kept = { roomName: marker('kept-room-name'), roomCustom: marker('kept-room-custom-data') };
  let keptAttachment: Upload;
  let keptFile: Upload;

  it("keeps a room's name, custom data and push title out of the log from the start, and a deleted room's (and its updates', its attachments', its files') out of every surface", async () => {
    const room = { name: marker('room-name'), custom: marker('room-custom-data'), title: marker('room-push-title'), renamed: marker('room-renamed'), updatedCustom: marker('room-updated-custom-data') };
    await call('POST', v6('/rooms'), { body: { id: 'kept', name: kept.roomName, custom_data: { note: kept.roomCustom }, user_ids: ['bob', 'cat'] }, as: as('alice') });
    await call('POST', v6('/rooms'), {
      body: { id: 'doomed', name: room.name, custom_data: { note: room.custom }, push_notification_title_override: room.title, user_ids: ['bob'] },
      as: as('alice'),
    });
    await call('PUT', v6('/rooms/doomed'), { body: { name: room.renamed, custom_data: { note: room.updatedCustom } } });
    const inRoom = await attach('doomed', 'alice', true);
    const unsentInRoom = await attach('doomed', 'bob', false);
    // Announced, never uploaded: its name and custom data go all the same.
    const announced = [marker('announced-name'), marker('announced-custom-data')];
    await call('POST', v6('/rooms/doomed/attachments'), {
      body: { content_type: 'text/plain', content_length: 5, name: announced[0], custom_data: { note: announced[1] } },
      as: as('bob'),
    });
    const fileInRoom = await uploadFile('doomed', 'alice');
    keptAttachment = await attach('kept', 'alice', true);
    keptFile = await uploadFile('kept', 'bob');

    const roomMarkers = Object.values(room);
    const uploadNames = [inRoom, unsentInRoom, keptAttachment].flatMap((a) => a.markers.slice(0, 2)).concat(fileInRoom.markers[0], keptFile.markers[0], ...announced);
    // Sealed from the start: the log's files never hold them; the API shows them while they exist.
    expect(scanForMarkers({ files: logFiles() }, [...roomMarkers, ...Object.values(kept), ...uploadNames])).toEqual([]);
    const before = await answers(['doomed', 'kept']);
    for (const m of [room.renamed, room.updatedCustom, room.title, inRoom.markers[0], fileInRoom.markers[0]]) expect(scanForMarkers({ texts: before }, [m])).not.toEqual([]);
    expect(scanForMarkers({ texts: { audit: before[audit('/rooms/doomed?limit=1000')] } }, [room.name, room.custom, unsentInRoom.markers[1]]).length).toBe(3);

    await call('DELETE', v6('/rooms/doomed'));
    // The room's own content is gone once the delete is answered.
    let surfaces = await everywhere(['doomed', 'kept']);
    expect(surfaces.scan(roomMarkers)).toEqual([]);
    rmSync(join(surfaces.exported, '..'), { recursive: true, force: true });
    // Its attachments' and files' with the blob janitor's sweep (their links are dead at once).
    const gone = [...roomMarkers, ...inRoom.markers, ...unsentInRoom.markers, ...fileInRoom.markers, ...announced];
    await eventually(() => swept(gone, 'doomed'), {
      what: "the deleted room's attachments swept (bytes removed, names shredded)",
      timeoutMs: 20_000,
    });
    surfaces = await everywhere(['doomed', 'kept']);
    expect(surfaces.scan(gone)).toEqual([]);

    // Nothing that was not deleted became unreadable.
    const keptMarkers = [...Object.values(kept), ...keptAttachment.markers, ...keptFile.markers];
    expect(new Set(surfaces.scan(keptMarkers).map((f) => f.marker))).toEqual(new Set(keptMarkers));
    const read = await answers(['kept']);
    expect(read[audit('/rooms/kept?limit=1000')]).toContain(kept.roomName);
    expect(read[audit('/rooms/kept?limit=1000')]).toContain(keptAttachment.markers[0]);
    expect(read[v6('/rooms/kept')]).toContain(kept.roomCustom);
    // The audit still says what happened, by whom and when.
    const history = await roomHistory('doomed');
    expect(history.filter((e) => e.type.startsWith('Room') && e.type !== 'RoomMembersAdded').map((e) => [e.type, e.data.erased ?? false])).toEqual([
      ['RoomCreated', true],
      ['RoomUpdated', true],
      ['RoomDeleted', false],
    ]);
    expect(history.filter((e) => e.type === 'AttachmentCreated').map((e) => [e.data.name, e.data.erased])).toEqual([
      ['', true],
      ['', true],
      ['', true],
      ['', true],
    ]);
    rmSync(join(surfaces.exported, '..'), { recursive: true, force: true });
  }, 120_000);

  it("shreds a deleted file's name and a deleted message's attachment before the delete is answered, and an uploader's unsent attachment", async () => {
    const file = await uploadFile('kept', 'alice');
    const carried = await attach('kept', 'alice', true);
    const unsent = await attach('kept', 'cat', false);
    const carriedByCat = await attach('kept', 'cat', true);
    expect(scanForMarkers({ files: logFiles() }, [...file.markers, ...carried.markers, ...unsent.markers])).toEqual([]);

    // A files API delete answers once the file's key and bytes are gone.
    expect((await call('DELETE', `${files('kept')}/files/${file.fileName}`, { as: as('alice') })).status).toBe(204);
    let surfaces = await everywhere(['kept']);
    expect(surfaces.scan(file.markers)).toEqual([]);
    rmSync(join(surfaces.exported, '..'), { recursive: true, force: true });

    // A message's delete answers once the attachment it carried is gone: its bytes, its names in the log.
    await call('DELETE', v6(`/rooms/kept/messages/${carried.messageId}`), { as: as('alice') });
    // At once, not at the blob janitor's next sweep.
    const roomAudit = (await call('GET', audit('/rooms/kept?limit=1000'))).text;
    expect(scanForMarkers({ files: logFiles(), folders: [join(dataDir, 'blobs')], texts: { roomAudit } }, carried.markers)).toEqual([]);
    surfaces = await everywhere(['kept']);
    expect(surfaces.scan(carried.markers)).toEqual([]);
    rmSync(join(surfaces.exported, '..'), { recursive: true, force: true });

    await call('DELETE', v6('/users/cat'));
    const gone = [...carried.markers, ...unsent.markers];
    await eventually(() => swept(gone, 'kept'), { what: 'the deleted attachments swept (bytes removed, names shredded)', timeoutMs: 20_000 });
    surfaces = await everywhere(['kept']);
    expect(surfaces.scan(gone)).toEqual([]);
    // The attachment cat's message carries stays with the message, and so does everything not deleted.
    const keptMarkers = [...carriedByCat.markers, ...keptAttachment.markers, ...keptFile.markers, kept.roomName];
    expect(new Set(surfaces.scan(keptMarkers).map((f) => f.marker))).toEqual(new Set(keptMarkers));
    rmSync(join(surfaces.exported, '..'), { recursive: true, force: true });

    await server.stop('SIGTERM');
    expect(scanForMarkers({ folders: [dataDir] }, [...gone, ...file.markers])).toEqual([]);
    expect(new Set(scanForMarkers({ folders: [dataDir] }, keptMarkers).map((f) => f.marker))).toEqual(new Set(keptMarkers));
    stillKept = keptMarkers;
  }, 120_000);

  let stillKept: readonly string[] = [];

  it('reads what was kept after a restart, and shreds all of it with the instance wipe', async () => {
    server = await startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${INSTANCE}`, INSTANCE_KEY: KEY, MASTER_KEY: '' });
    expect(stillKept.length).toBeGreaterThan(0);
    const exported = (await freshExport(dataDir, INSTANCE)).folder;
    // An export holds the instance's events (sealed content opened) and its blobs.
    expect(new Set(scanForMarkers({ folders: [exported] }, stillKept).map((f) => f.marker))).toEqual(new Set(stillKept));
    rmSync(join(exported, '..'), { recursive: true, force: true });

    await call('DELETE', v6('/resources'));
    await eventually(() => scanForMarkers({ folders: [join(dataDir, 'blobs')] }, stillKept).length === 0, { what: 'the wiped instance’s blobs removed', timeoutMs: 20_000 });
    const surfaces = await everywhere(['kept']);
    expect(surfaces.scan(stillKept)).toEqual([]);
    rmSync(join(surfaces.exported, '..'), { recursive: true, force: true });
  }, 120_000);
});

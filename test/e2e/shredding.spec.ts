import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instanceCalls } from '../support/instance-calls';
import { scanForMarkers } from '../support/byte-scan';
import { freshExport } from '../support/fresh-export';
import { ServerProcess, startProcess } from '../support/server-process';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';

/**
 * Deleting means gone, in the event log: a real server from dist/ on the embedded default,
 * messages with markers, then their deletes; a byte scan of the event log and the key store
 * (WAL included, while running and after a stop), every API answer (the audit API too) and a
 * fresh export finds none of the deleted markers, and every marker not deleted is still read.
 */
const INSTANCE = 'shredding';
const KEY = 'shred-key:shred-secret-5b0c7e2a91';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

let dataDir: string;
let server: ServerProcess;
const { token, call, v6, v2, audit } = instanceCalls(INSTANCE, KEY, () => server.port);
const logFiles = () => ['events.sqlite', 'events.sqlite-wal', 'keys.sqlite', 'keys.sqlite-wal'].map((f) => join(dataDir, f));

/** Every answer a client or an operator can read the messages through. */
async function answers(): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  for (const path of [
    v6('/rooms/r1/messages?limit=100'),
    v2('/rooms/r1/messages?limit=100'),
    audit('/rooms/r1?limit=1000'),
    audit('/actors/alice?limit=1000'),
    audit('/actors/bob?limit=1000'),
  ]) {
    // An actor with no history left answers 404: its answer is scanned all the same.
    texts[path] = (await call('GET', path, { anyStatus: true })).text;
  }
  return texts;
}

/** A fresh export of the instance, by the built CLI beside the running server. */
const exportNow = async () => (await freshExport(dataDir, INSTANCE)).folder;

/** A server from dist/ on `dataDir`, the instance's users alice and bob, and a room r1 of both. */
async function startOn(dir: string, setUp = true): Promise<void> {
  dataDir = dir;
  server = await startProcess('dist/src/main.js', { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${INSTANCE}`, INSTANCE_KEY: KEY, MASTER_KEY: '' });
  if (!setUp) return;
  await call('POST', v6('/batch_users'), { body: { users: [{ id: 'alice', name: 'Alice' }, { id: 'bob', name: 'Bob' }] } });
  await call('POST', v6('/rooms'), { body: { id: 'r1', name: 'r1', user_ids: ['bob'] }, as: token({ sub: 'alice' }) });
}

const send = async (text: string, as: string) =>
  (await call('POST', v6('/rooms/r1/messages'), { body: { parts: [{ type: 'text/plain', content: text }] }, as })).body.message_id as number;

describe('deleted messages are shredded from the event log (crypto-shredding)', () => {
  beforeAll(() => startOn(mkdtempSync(join(tmpdir(), 'parley-shred-'))), 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps message texts out of the log from the start, and deleted ones (v6 with their edits, v2, a text before its edit) out of every file, answer and export', async () => {
    const alice = token({ sub: 'alice' });
    const [v6Text, v6Edit, v2Text, kept, beforeEdit, keptEdit] = ['v6', 'v6-edit', 'v2', 'kept', 'before-edit', 'kept-edit'].map(marker);
    const v6Id = await send(v6Text, alice);
    expect((await call('GET', audit('/rooms/r1?limit=1000'))).text).toContain(v6Text);
    await call('PUT', v6(`/rooms/r1/messages/${v6Id}`), { body: { parts: [{ type: 'text/plain', content: v6Edit }] }, as: alice });
    const v2Id = (await call('POST', v2('/rooms/r1/messages'), { body: { text: v2Text }, as: token({ sub: 'bob' }) })).body.message_id as number;
    await send(kept, alice);
    const editedId = await send(beforeEdit, alice);
    const before = await answers();

    // Sealed from the start: the log's files never hold a message text.
    expect(scanForMarkers({ files: logFiles() }, [v6Text, v6Edit, v2Text, kept, beforeEdit])).toEqual([]);
    for (const text of [v6Edit, v2Text, beforeEdit]) expect(scanForMarkers({ texts: before }, [text])).not.toEqual([]);

    // An edit destroys the text before it.
    await call('PUT', v6(`/rooms/r1/messages/${editedId}`), { body: { parts: [{ type: 'text/plain', content: keptEdit }] }, as: alice });

    await call('DELETE', v6(`/rooms/r1/messages/${v6Id}`), { as: alice });
    await call('DELETE', v2(`/messages/${v2Id}`));

    const exported = await exportNow();
    const deleted = [v6Text, v6Edit, v2Text, beforeEdit];
    expect(scanForMarkers({ files: logFiles(), folders: [exported], texts: await answers() }, deleted)).toEqual([]);
    // Nothing that was not deleted became unreadable.
    const stillRead = await answers();
    expect(stillRead[audit('/rooms/r1?limit=1000')]).toContain(kept);
    expect(stillRead[audit('/rooms/r1?limit=1000')]).toContain(keptEdit);
    expect(stillRead[v6('/rooms/r1/messages?limit=100')]).toContain(keptEdit);
    expect(scanForMarkers({ folders: [exported] }, [kept, keptEdit])).not.toEqual([]);
    // The audit still says what happened, by whom and when.
    const history = JSON.parse(stillRead[audit('/rooms/r1?limit=1000')]).events as { type: string; data: { id: number; erased?: boolean } }[];
    expect(history.filter((e) => e.data.id === v6Id).map((e) => [e.type, e.data.erased ?? false])).toEqual([
      ['MessageSent', true],
      ['MessageEdited', true],
      ['MessageDeleted', false],
    ]);
    rmSync(join(exported, '..'), { recursive: true, force: true });

    await server.stop('SIGTERM');
    expect(scanForMarkers({ files: logFiles() }, deleted)).toEqual([]);
  }, 120_000);
});

describe('deleted thread replies are shredded as messages are', () => {
  beforeAll(() => startOn(mkdtempSync(join(tmpdir(), 'parley-shred-threads-'))), 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('leaves no deleted reply (thread-only or also in the room, with its edit) in any file under DATA_DIR, answer or export', async () => {
    const alice = token({ sub: 'alice' });
    const bob = token({ sub: 'bob' });
    const [hidden, hiddenEdit, shared, kept] = ['thread-only', 'thread-only-edit', 'also-in-room', 'kept-reply'].map(marker);
    const parent = await send('a parent', alice);
    const reply = async (text: string, extra: object = {}) =>
      (await call('POST', v6(`/rooms/r1/messages/${parent}/replies`), { body: { parts: [{ type: 'text/plain', content: text }], ...extra }, as: bob })).body
        .message_id as number;
    const hiddenId = await reply(hidden);
    const sharedId = await reply(shared, { also_in_room: true });
    await reply(kept);
    await call('PUT', v6(`/rooms/r1/messages/${hiddenId}`), { body: { parts: [{ type: 'text/plain', content: hiddenEdit }] }, as: bob });
    const repliesPage = v6(`/rooms/r1/messages/${parent}/replies?limit=100`);
    expect((await call('GET', repliesPage, { as: bob })).text).toContain(hiddenEdit);
    expect(scanForMarkers({ files: logFiles() }, [hidden, hiddenEdit, shared, kept])).toEqual([]);

    await call('DELETE', v6(`/rooms/r1/messages/${hiddenId}`), { as: bob });
    await call('DELETE', v6(`/rooms/r1/messages/${sharedId}`), { as: bob });
    const exported = await exportNow();
    const texts = { ...(await answers()), replies: (await call('GET', repliesPage, { as: bob })).text };
    const deleted = [hidden, hiddenEdit, shared];
    expect(scanForMarkers({ folders: [dataDir, exported], texts }, deleted)).toEqual([]);
    expect(texts.replies).toContain(kept);
    rmSync(join(exported, '..'), { recursive: true, force: true });
    await server.stop('SIGTERM');
    expect(scanForMarkers({ folders: [dataDir] }, deleted)).toEqual([]);
  }, 120_000);
});

describe('a delete whose process was killed before it destroyed the keys', () => {
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is shredded by the next start before it serves anything', async () => {
    await startOn(mkdtempSync(join(tmpdir(), 'parley-shred-crash-')));
    const [doomed, kept] = ['crash-doomed', 'crash-kept'].map(marker);
    const id = await send(doomed, token({ sub: 'alice' }));
    await send(kept, token({ sub: 'bob' }));
    await server.stop('SIGKILL');
    // What a kill -9 between the delete's append and its destroy leaves: the delete in the log, the key still stored.
    const log = new SqliteEventStore(join(dataDir, 'events.sqlite'));
    await log.append(
      `message-${INSTANCE}.${id}`,
      [{ type: 'MessageDeleted', data: { id, room_id: 'r1', tombstone: false, deleted_at: new Date().toISOString() }, metadata: { occurred_at: new Date().toISOString() } }],
      'any',
    );
    await log.close();

    await startOn(dataDir, false);
    const exported = await exportNow();
    const read = await answers();
    expect(scanForMarkers({ files: logFiles(), folders: [exported], texts: read }, [doomed])).toEqual([]);
    expect(read[audit('/rooms/r1?limit=1000')]).toContain(kept);
    rmSync(join(exported, '..'), { recursive: true, force: true });
  }, 120_000);
});

describe('a room delete and the instance wipe', () => {
  beforeAll(() => startOn(mkdtempSync(join(tmpdir(), 'parley-shred-room-'))), 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("shred a deleted room's messages, then, on the wipe, everything the instance held", async () => {
    const alice = token({ sub: 'alice' });
    await call('POST', v6('/rooms'), { body: { id: 'r2', name: 'r2' }, as: alice });
    const [inRoom, inRoomEdit, elsewhere] = ['room', 'room-edit', 'elsewhere'].map(marker);
    const id = (await call('POST', v6('/rooms/r2/messages'), { body: { parts: [{ type: 'text/plain', content: inRoom }] }, as: alice })).body.message_id;
    await call('PUT', v6(`/rooms/r2/messages/${id}`), { body: { parts: [{ type: 'text/plain', content: inRoomEdit }] }, as: alice });
    await send(elsewhere, alice);

    await call('DELETE', v6('/rooms/r2'));
    const exported = await exportNow();
    const read = await answers();
    read.roomAudit = (await call('GET', audit('/rooms/r2?limit=1000'))).text;
    expect(scanForMarkers({ files: logFiles(), folders: [exported], texts: read }, [inRoom, inRoomEdit])).toEqual([]);
    expect(read[audit('/rooms/r1?limit=1000')]).toContain(elsewhere);
    rmSync(join(exported, '..'), { recursive: true, force: true });

    await call('DELETE', v6('/resources'));
    const afterWipe = await exportNow();
    expect(scanForMarkers({ files: logFiles(), folders: [afterWipe] }, [elsewhere])).toEqual([]);
    rmSync(join(afterWipe, '..'), { recursive: true, force: true });

    // The instance serves on: what is sent after the wipe is sealed with keys of its own, and read.
    await call('POST', v6('/batch_users'), { body: { users: [{ id: 'alice', name: 'Alice' }] } });
    const aliceSu = token({ sub: 'alice', su: true }); // the wipe took the roles too
    await call('POST', v6('/rooms'), { body: { id: 'r3', name: 'r3' }, as: aliceSu });
    const fresh = marker('after-wipe');
    await call('POST', v6('/rooms/r3/messages'), { body: { parts: [{ type: 'text/plain', content: fresh }] }, as: aliceSu });
    expect((await call('GET', v6('/rooms/r3/messages'))).text).toContain(fresh);
    expect((await call('GET', audit('/rooms/r3?limit=1000'))).text).toContain(fresh);
  }, 120_000);
});

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { PERSONAL_DATA_RULES } from '../../../app/personal-data-rules';
import { scanForMarkers } from '../../../../test/support/byte-scan';
import { openSqliteStores, SqliteStores } from '../../../../test/support/sqlite-stores';
import { eventually } from '../../../../test/support/waiting';
import { DataKeyRing } from '../../crypto/data-key-ring';
import { SecretBox } from '../../crypto/secret-box';
import { RecordedEvent } from '../../domain/event';
import { DataKeyStore } from '../../ports/data-key-store.port';
import { EventToAppend, LogSubscription } from '../../ports/event-store.port';
import { SealingEventStore } from './sealing-event-store';

const box = SecretBox.fromBase64(Buffer.alloc(32, 9).toString('base64'));
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const sent = (id: number, text: string, user = 'alice'): EventToAppend => ({
  type: 'MessageSent',
  data: { id, user_id: user, user_created_at: 'u1', parts: [{ type: 'text/plain', content: text }], room_created_at: 'r1', created_at: 'c' },
  metadata: meta,
});
const edited = (id: number, text: string, at: string): EventToAppend => ({
  type: 'MessageEdited',
  data: { id, room_id: 'room/1', parts: [{ type: 'text/plain', content: text }], updated_at: at },
  metadata: meta,
});
const deleted = (id: number): EventToAppend => ({ type: 'MessageDeleted', data: { id, room_id: 'room/1', tombstone: false, deleted_at: 'd' }, metadata: meta });
const TIMELINE = 'messages-acme.room/1';
const ownStream = (id: number) => `message-acme.${id}`;
const textOf = (event: RecordedEvent) => (event.data as { parts: { content?: string }[] }).parts.map((p) => p.content ?? '').join('');

/** Counts the store's durable writes. */
class CountingKeys extends SqliteDataKeyStore {
  creates = 0;
  reads = 0;
  override create(...args: Parameters<DataKeyStore['create']>) {
    this.creates++;
    return super.create(...args);
  }
  override getMany(...args: Parameters<DataKeyStore['getMany']>) {
    this.reads++;
    return super.getMany(...args);
  }
}

async function firstOf(subscription: LogSubscription, count: number): Promise<RecordedEvent[]> {
  const found: RecordedEvent[] = [];
  for await (const event of subscription) {
    found.push(event);
    if (found.length === count) break;
  }
  await subscription.close();
  return found;
}

describe('SealingEventStore', () => {
  let stores: SqliteStores;
  let keys: CountingKeys;
  let log: SealingEventStore;
  const failures: unknown[] = [];
  beforeEach(() => {
    stores = openSqliteStores('parley-sealing-');
    keys = new CountingKeys(join(stores.dir, 'keys.sqlite'));
    log = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES, (error) => failures.push(error));
    failures.length = 0;
  });
  afterEach(async () => {
    await keys.close();
    await stores.close();
  });

  it('keeps a message text out of the log, and shows it on every read path while its key exists', async () => {
    const text = marker('sent');
    await log.append(TIMELINE, [sent(1, text)], 'any');
    expect(scanForMarkers({ files: [join(stores.dir, 'events.sqlite'), join(stores.dir, 'events.sqlite-wal')] }, [text])).toEqual([]);
    expect((await stores.events.readStream(TIMELINE))[0].data).not.toHaveProperty('parts');

    expect(textOf((await log.readStream(TIMELINE))[0])).toBe(text);
    expect(textOf((await log.readAll())[0])).toBe(text);
    expect(textOf((await firstOf(log.subscribeToAll(), 1))[0])).toBe(text);
    expect(textOf((await firstOf(log.subscribeToStream(TIMELINE), 1))[0])).toBe(text);
    expect((await log.readAll())[0].data).not.toHaveProperty('erased');
  });

  it('creates the keys of one append in one durable write', async () => {
    await log.append(TIMELINE, [sent(1, 'a'), sent(2, 'b'), sent(3, 'c')], 'any');
    expect(keys.creates).toBe(1);
    expect((await log.readStream(TIMELINE)).map(textOf)).toEqual(['a', 'b', 'c']);
  });

  it('makes the keys of a reserved block of message ids ready in one write, so that sends into it write none', async () => {
    await log.append('messageids-acme', [{ type: 'MessageIdsReserved', data: { first: 1, last: 1000 }, metadata: meta }], 'any');
    expect(keys.creates).toBe(1);
    await log.append(TIMELINE, [sent(1, 'a')], 'any');
    await log.append(TIMELINE, [sent(1000, 'b')], 'any');
    expect(keys.creates).toBe(1);
    await log.append(TIMELINE, [sent(1001, 'c')], 'any');
    expect(keys.creates).toBe(2);
    expect((await log.readStream(TIMELINE)).map(textOf)).toEqual(['a', 'b', 'c']);
  });

  it('destroys every version of a deleted message before the delete is answered: its text and edits read as erased, the others are untouched', async () => {
    const [first, edit, other] = [marker('first'), marker('edit'), marker('other')];
    await log.append(TIMELINE, [sent(1, first), sent(2, other)], 'any');
    await log.append(ownStream(1), [edited(1, edit, '2026-01-02T00:00:00.000Z')], 'any');
    expect(textOf((await log.readStream(ownStream(1)))[0])).toBe(edit);

    await log.append(ownStream(1), [deleted(1)], 'any');
    const [gone, kept] = await log.readStream(TIMELINE);
    expect(gone.data).toEqual({ id: 1, user_id: 'alice', user_created_at: 'u1', room_created_at: 'r1', created_at: 'c', parts: [], erased: true });
    expect(textOf(kept)).toBe(other);
    const [editGone, deletion] = await log.readStream(ownStream(1));
    expect(editGone.data).toMatchObject({ id: 1, parts: [], erased: true });
    expect(deletion.data).toEqual(deleted(1).data);
    const everywhere = JSON.stringify([await log.readAll(), await firstOf(log.subscribeToAll(), 4)]);
    expect(scanForMarkers({ folders: [stores.dir], texts: { reads: everywhere } }, [first, edit])).toEqual([]);
    expect(scanForMarkers({ texts: { reads: everywhere } }, [other])).not.toEqual([]);
    expect(failures).toEqual([]);
  });

  it('names the data keys an append seals under, and seals a text under several of them that reads only while every one exists', async () => {
    const events = [sent(1, 'a'), sent(2, 'b')];
    const named = log.dataKeysOf(TIMELINE, events).map((key) => key.id);
    expect(named).toHaveLength(2);
    expect(log.dataKeysOf(TIMELINE, [deleted(1)])).toEqual([]);
    // Nothing is sealed under a key that does not exist (none is made for it).
    expect(await log.sealUnderKeys(named, 'too early')).toBeNull();
    await log.append(TIMELINE, events, 'any');
    const secret = marker('answer');
    const sealed = (await log.sealUnderKeys(named, JSON.stringify({ secret })))!;
    expect(scanForMarkers({ texts: { sealed: JSON.stringify(sealed) } }, [secret])).toEqual([]);
    expect(await log.openUnderKeys(sealed)).toBe(JSON.stringify({ secret }));
    const single = (await log.sealUnderKeys([named[1]], 'one key'))!;

    await log.append(ownStream(1), [deleted(1)], 'any');
    expect(await log.openUnderKeys(sealed)).toBeNull();
    expect(await log.sealUnderKeys(named, 'after the delete')).toBeNull();
    expect(await log.openUnderKeys(single)).toBe('one key');
  });

  it("runs every context's rule for one delete: a room's delete destroys its messages and its own name", async () => {
    const [text, name, otherName] = [marker('room-text'), marker('room-name'), marker('other-room-name')];
    const room = (id: string, roomName: string): EventToAppend => ({
      type: 'RoomCreated',
      data: { id, name: roomName, private: false, created_at: '2026-01-01T00:00:00.000Z' },
      metadata: meta,
    });
    await log.append('room-acme.room/1', [room('room/1', name)], 'any');
    await log.append('room-acme.other', [room('other', otherName)], 'any');
    await log.append(TIMELINE, [sent(1, text)], 'any');
    expect(JSON.stringify(await log.readAll())).toContain(name);

    await log.append('room-acme.room/1', [{ type: 'RoomDeleted', data: { deleted_at: 'd' }, metadata: meta }], 'any');
    const [created] = await log.readStream('room-acme.room/1');
    expect(created.data).toEqual({ id: 'room/1', name: '', private: false, created_at: '2026-01-01T00:00:00.000Z', erased: true });
    const reads = JSON.stringify(await log.readAll());
    expect(scanForMarkers({ folders: [stores.dir], texts: { reads } }, [text, name])).toEqual([]);
    expect(reads).toContain(otherName);
  });

  it('reads events written before sealing as they are', async () => {
    const text = marker('plain');
    await stores.events.append(TIMELINE, [sent(1, text)], 'any');
    expect(textOf((await log.readStream(TIMELINE))[0])).toBe(text);
    expect((await log.readStream(TIMELINE))[0].data).toEqual(sent(1, text).data);
  });

  it('stops showing a key another process destroyed once the cache bound has passed', async () => {
    const shortLived = new SealingEventStore(stores.events, new DataKeyRing(keys, box, { size: 10, ttlMs: 50 }), PERSONAL_DATA_RULES);
    const text = marker('other-process');
    await shortLived.append(TIMELINE, [sent(1, text)], 'any');
    expect(textOf((await shortLived.readStream(TIMELINE))[0])).toBe(text);
    // Another process: its own store on the same file.
    const elsewhere = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    await elsewhere.destroy({ prefix: 'acme/' });
    await elsewhere.close();
    await eventually(async () => ((await shortLived.readStream(TIMELINE))[0].data as { erased?: boolean }).erased, { what: 'the key destroyed elsewhere to be gone here' });
  });

  it("stops showing a key another thread's ring destroyed as soon as it is told, long before the cache bound", async () => {
    const writerRing = new DataKeyRing(keys, box, { size: 10, ttlMs: 60_000, exclusive: true });
    const writer = new SealingEventStore(stores.events, writerRing, PERSONAL_DATA_RULES);
    // The projector thread: its own ring over the same key store, told of each destroy of the writer's.
    const readerKeys = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    const readerRing = new DataKeyRing(readerKeys, box, { size: 10, ttlMs: 60_000 });
    const reader = new SealingEventStore(stores.events, readerRing, PERSONAL_DATA_RULES);
    const told: unknown[] = [];
    writerRing.watchDestroys((selector) => (told.push(selector), readerRing.forgetDestroyed(selector)));
    const text = marker('thread');
    await writer.append(TIMELINE, [sent(1, text)], 'any');
    expect(textOf((await reader.readStream(TIMELINE))[0])).toBe(text); // its key now cached in the reader's ring
    await writer.append(ownStream(1), [deleted(1)], 'any');
    expect(told).not.toEqual([]);
    expect((await reader.readStream(TIMELINE))[0].data).toMatchObject({ erased: true });
    await readerKeys.close();
  });

  it('never seals with a cached key another process destroyed: the send gets a key of its own', async () => {
    await log.append('messageids-acme', [{ type: 'MessageIdsReserved', data: { first: 1, last: 1000 }, metadata: meta }], 'any');
    const elsewhere = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    await elsewhere.destroy({ prefix: 'acme/' }); // an instance wipe served by another process
    await elsewhere.close();
    const text = marker('after-wipe');
    await log.append(TIMELINE, [sent(1, text)], 'any');
    const fresh = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
    expect(textOf((await fresh.readStream(TIMELINE))[0])).toBe(text);
  });

  describe('in a process that alone destroys keys (the embedded server)', () => {
    const exclusive = () => new SealingEventStore(stores.events, new DataKeyRing(keys, box, { size: 10_000, ttlMs: 60_000, exclusive: true }), PERSONAL_DATA_RULES);

    it('seals the sends into a block it reserved without reading a key from the store', async () => {
      const own = exclusive();
      await own.append('messageids-acme', [{ type: 'MessageIdsReserved', data: { first: 1, last: 1000 }, metadata: meta }], 'any');
      const readsBefore = keys.reads;
      for (let id = 1; id <= 20; id++) await own.append(TIMELINE, [sent(id, `text ${id}`)], 'any');
      expect(keys.reads).toBe(readsBefore);
      expect(keys.creates).toBe(1);
      const fresh = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
      expect((await fresh.readStream(TIMELINE)).map(textOf)).toEqual(Array.from({ length: 20 }, (_, i) => `text ${i + 1}`));
    });

    it('never seals with a key a destroy took while the block was being made ready: the sends into it read back whole', async () => {
      const ring = new DataKeyRing(keys, box, { size: 10_000, ttlMs: 60_000, exclusive: true });
      const own = new SealingEventStore(stores.events, ring, PERSONAL_DATA_RULES);
      const reserving = own.append('messageids-acme', [{ type: 'MessageIdsReserved', data: { first: 1, last: 1000 }, metadata: meta }], 'any');
      // The block's keys are written a few hundred per turn: a wipe lands between two of them.
      await eventually(async () => (await keys.getMany(['acme/message/1/0'])).size === 1, { what: 'the first keys of the block to be written' });
      await ring.destroy({ prefix: 'acme/' });
      await reserving;
      const texts = [marker('first'), marker('last')];
      await own.append(TIMELINE, [sent(1, texts[0])], 'any');
      await own.append(TIMELINE, [sent(1000, texts[1])], 'any');
      const fresh = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
      expect((await fresh.readStream(TIMELINE)).map(textOf)).toEqual(texts);
    });

    it('opens what a subscription delivers with the keys it holds, and shows a key it destroyed as erased at once', async () => {
      const ring = new DataKeyRing(keys, box, { size: 10_000, ttlMs: 60_000, exclusive: true });
      const own = new SealingEventStore(stores.events, ring, PERSONAL_DATA_RULES);
      const [kept, doomed] = [marker('kept'), marker('doomed')];
      await own.append(TIMELINE, [sent(1, kept), sent(2, doomed)], 'any');
      expect((await firstOf(own.subscribeToAll(), 2)).map(textOf)).toEqual([kept, doomed]);
      await ring.destroy({ prefix: 'acme/message/2/' });
      const [first, second] = await firstOf(own.subscribeToAll(), 2);
      expect(textOf(first)).toBe(kept);
      expect(second.data).toMatchObject({ id: 2, parts: [], erased: true });
    });

    it('never seals with a key it destroyed: a send after an instance wipe gets a key of its own', async () => {
      const ring = new DataKeyRing(keys, box, { size: 10_000, ttlMs: 60_000, exclusive: true });
      const own = new SealingEventStore(stores.events, ring, PERSONAL_DATA_RULES);
      await own.append('messageids-acme', [{ type: 'MessageIdsReserved', data: { first: 1, last: 1000 }, metadata: meta }], 'any');
      await ring.destroy({ prefix: 'acme/' });
      const text = marker('after-wipe');
      await own.append(TIMELINE, [sent(1, text)], 'any');
      const fresh = new SealingEventStore(stores.events, new DataKeyRing(keys, box), PERSONAL_DATA_RULES);
      expect(textOf((await fresh.readStream(TIMELINE))[0])).toBe(text);
    });
  });

  it('reports a destroy that fails without failing the stored delete', async () => {
    const text = marker('failing');
    await log.append(TIMELINE, [sent(1, text)], 'any');
    jest.spyOn(keys, 'destroy').mockRejectedValueOnce(new Error('disk gone'));
    await expect(log.append(ownStream(1), [deleted(1)], 'any')).resolves.toBeDefined();
    expect(failures).toEqual([new Error('disk gone')]);
  });
});

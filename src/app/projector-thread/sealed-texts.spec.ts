import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SealingEventStore } from '../../shared/application/operations/sealing-event-store';
import { DataKeyRing } from '../../shared/crypto/data-key-ring';
import { SecretBox } from '../../shared/crypto/secret-box';
import { RecordedEvent } from '../../shared/domain/event';
import { DataKeyStore } from '../../shared/ports/data-key-store.port';
import { EventToAppend } from '../../shared/ports/event-store.port';
import { openSqliteStores, SqliteStores } from '../../../test/support/sqlite-stores';
import { PERSONAL_DATA_RULES } from '../personal-data-rules';
import { rememberSealedTexts, SealedTexts } from './sealed-texts';

const box = SecretBox.fromBase64(Buffer.alloc(32, 7).toString('base64'));
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
const TIMELINE = 'messages-acme.room/1';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
const sent = (id: number, text: string): EventToAppend => ({
  type: 'MessageSent',
  data: { id, user_id: 'alice', user_created_at: 'u1', parts: [{ type: 'text/plain', content: text }], room_created_at: 'r1', created_at: 'c' },
  metadata: meta,
});
const deleted = (id: number): EventToAppend => ({ type: 'MessageDeleted', data: { id, room_id: 'room/1', tombstone: false, deleted_at: 'd' }, metadata: meta });
const textOf = (event: RecordedEvent) => (event.data as { parts?: { content?: string }[] }).parts?.map((p) => p.content ?? '').join('');
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Counts the reads of the projector side's key store: a text handed over needs none. */
class CountingKeys extends SqliteDataKeyStore {
  reads = 0;
  override getMany(...args: Parameters<DataKeyStore['getMany']>) {
    this.reads++;
    return super.getMany(...args);
  }
}

/**
 * The request thread (its sealing log and exclusive key ring, handing over what it seals) and
 * the projector thread (its own connections and ring) in one process, as ProjectorThread and
 * worker-entry.ts join them: the port between them is a direct call, in the same order.
 */
describe('SealedTexts', () => {
  let stores: SqliteStores;
  let writerKeys: SqliteDataKeyStore;
  let readerKeys: CountingKeys;
  let readerEvents: SqliteEventStore;
  let writer: SealingEventStore;
  let reader: SealingEventStore;

  beforeEach(() => {
    stores = openSqliteStores('parley-sealed-texts-');
    writerKeys = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    readerKeys = new CountingKeys(join(stores.dir, 'keys.sqlite'));
    const writerRing = new DataKeyRing(writerKeys, box, { size: 1000, ttlMs: 60_000, exclusive: true });
    const readerRing = new DataKeyRing(readerKeys, box, { size: 1000, ttlMs: 60_000 });
    writer = new SealingEventStore(stores.events, writerRing, PERSONAL_DATA_RULES);
    readerEvents = new SqliteEventStore(join(stores.dir, 'events.sqlite'));
    reader = new SealingEventStore(readerEvents, readerRing, PERSONAL_DATA_RULES);
    const texts = new SealedTexts((message) => rememberSealedTexts(readerRing, message));
    writerRing.watchSealed(texts.add);
    writerRing.watchDestroys((selector) => {
      texts.flush();
      readerRing.forgetDestroyed(selector);
    });
  });
  afterEach(async () => {
    await readerEvents.close();
    await writerKeys.close();
    await readerKeys.close();
    await stores.close();
  });

  it('lets the other thread open what was sealed without its keys, once; read again, it opens with them', async () => {
    const texts = [marker('a'), marker('b'), marker('c')];
    await writer.append(TIMELINE, [sent(1, texts[0]), sent(2, texts[1])], 'any');
    await writer.append(TIMELINE, [sent(3, texts[2])], 'any');
    await turn();

    expect((await reader.readAll()).map(textOf)).toEqual(texts);
    expect(readerKeys.reads).toBe(0);
    expect((await reader.readAll()).map(textOf)).toEqual(texts);
    expect(readerKeys.reads).toBeGreaterThan(0);
  });

  it('opens no text handed over whose key was destroyed since: the event reads erased, as with its key gone', async () => {
    const text = marker('gone');
    await writer.append(TIMELINE, [sent(1, text)], 'any');
    await turn();
    // The message is deleted, which destroys its key, before the other thread reads it.
    await writer.append('message-acme.1', [deleted(1)], 'any');

    const [message] = await reader.readAll();
    expect(message.data).toMatchObject({ erased: true });
    expect(JSON.stringify(message)).not.toContain(text);
  });
});

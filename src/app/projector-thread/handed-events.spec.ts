import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SqliteDataKeyStore } from '../../adapters/data-keys/sqlite/sqlite-data-key-store';
import { ReportedHead, SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SealingEventStore } from '../../shared/application/operations/sealing-event-store';
import { DataKeyRing } from '../../shared/crypto/data-key-ring';
import { SecretBox } from '../../shared/crypto/secret-box';
import { LogPosition, RecordedEvent } from '../../shared/domain/event';
import { DataKeyStore } from '../../shared/ports/data-key-store.port';
import { EventToAppend, LogSubscription } from '../../shared/ports/event-store.port';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { openSqliteStores, SqliteStores } from '../../../test/support/sqlite-stores';
import { eventually } from '../../../test/support/waiting';
import { PERSONAL_DATA_RULES } from '../personal-data-rules';
import { HandedEvents } from './handed-events';
import { HandOver } from './hand-over';

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

/** Counts the reads of the projector side's key store: a handed event needs none. */
class CountingKeys extends SqliteDataKeyStore {
  reads = 0;
  override getMany(...args: Parameters<DataKeyStore['getMany']>) {
    this.reads++;
    return super.getMany(...args);
  }
}

/** The head the request thread reports on disk, as the projector thread follows it. */
class Head implements ReportedHead {
  through = 0;
  private readonly listeners = new Set<() => void>();
  moveTo(through: number): void {
    if (through <= this.through) return;
    this.through = through;
    for (const listener of [...this.listeners]) listener();
  }
  onMoved(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Reads a subscription into `into` until it is closed. */
function collect(subscription: LogSubscription, into: RecordedEvent[]): Promise<void> {
  return (async () => {
    for await (const event of subscription) into.push(event);
  })();
}

/**
 * The request thread (a sealing log, its live log handing over what it reads back) and the
 * projector thread (its own connection and key ring, reading through HandedEvents), in one
 * process: the port between them is a direct call.
 */
describe('HandedEvents', () => {
  let stores: SqliteStores;
  let writerKeys: SqliteDataKeyStore;
  let readerKeys: CountingKeys;
  let readerEvents: SqliteEventStore;
  let writer: SealingEventStore;
  let reader: SealingEventStore;
  let handed: HandedEvents;
  let liveLog: LiveLog;
  let handOver: HandOver;
  let stopHead: () => void;
  let subscription: LogSubscription | null;

  beforeEach(async () => {
    stores = openSqliteStores('parley-handed-');
    writerKeys = new SqliteDataKeyStore(join(stores.dir, 'keys.sqlite'));
    readerKeys = new CountingKeys(join(stores.dir, 'keys.sqlite'));
    const writerRing = new DataKeyRing(writerKeys, box, { size: 1000, ttlMs: 60_000, exclusive: true });
    const readerRing = new DataKeyRing(readerKeys, box, { size: 1000, ttlMs: 60_000 });
    writer = new SealingEventStore(stores.events, writerRing, PERSONAL_DATA_RULES);
    const head = new Head();
    stopHead = stores.events.watchVisibleHead((through) => head.moveTo(through));
    readerEvents = new SqliteEventStore(join(stores.dir, 'events.sqlite'), { reportedHead: head });
    handed = new HandedEvents(readerEvents, head, readerRing);
    reader = new SealingEventStore(handed, readerRing, PERSONAL_DATA_RULES);
    handOver = new HandOver(writerRing, (message) => handed.receive(message));
    writerRing.watchDestroys((selector) => {
      handOver.flush();
      readerRing.forgetDestroyed(selector);
    });
    liveLog = new LiveLog(stores.events);
    await liveLog.start();
    subscription = null;
  });
  afterEach(async () => {
    await subscription?.close();
    await liveLog.stop();
    stopHead();
    await readerEvents.close();
    await writerKeys.close();
    await readerKeys.close();
    await stores.close();
  });

  const follow = (after: LogPosition | null = null) => {
    const seen: RecordedEvent[] = [];
    subscription = reader.subscribeToAll({ after });
    void collect(subscription, seen);
    return seen;
  };

  it('yields what was appended before the hand-over began (read from the log), then what is handed over, opened without a key, in log order', async () => {
    const before = marker('before');
    await writer.append(TIMELINE, [sent(1, before)], 'any');
    const seen = follow();
    await eventually(() => seen.length === 1 || undefined);
    liveLog.tap(handOver.read);
    const texts = [marker('a'), marker('b'), marker('c')];
    await writer.append(TIMELINE, [sent(2, texts[0]), sent(3, texts[1])], 'any');
    await writer.append(TIMELINE, [sent(4, texts[2])], 'any');
    await eventually(() => seen.length === 4 || undefined);

    expect(seen.map(textOf)).toEqual([before, ...texts]);
    expect(seen.map((e) => e.position)).toEqual((await stores.events.readAll()).map((e) => e.position));
    // The first was read from the log and opened with its key; the handed ones needed none.
    const readsAfterFirst = readerKeys.reads;
    await writer.append(TIMELINE, [sent(5, marker('d'))], 'any');
    await eventually(() => seen.length === 5 || undefined);
    expect(readerKeys.reads).toBe(readsAfterFirst);
  });

  it('reads the log for a commit the live log did not hand over (a gap), and for a head nothing handed covers', async () => {
    liveLog.tap(handOver.read);
    const seen = follow();
    await writer.append(TIMELINE, [sent(1, marker('one'))], 'any');
    await eventually(() => seen.length === 1 || undefined);
    // The live log stops handing over: the commits after it are read from the log once the head shows them.
    await liveLog.stop();
    const missed = [marker('two'), marker('three')];
    await writer.append(TIMELINE, [sent(2, missed[0])], 'any');
    await writer.append(TIMELINE, [sent(3, missed[1])], 'any');
    await eventually(() => seen.length === 3 || undefined);
    // Handed again from a live log started later: the run starts after a gap the log fills.
    liveLog = new LiveLog(stores.events);
    await writer.append(TIMELINE, [sent(4, marker('four'))], 'any');
    await liveLog.start();
    liveLog.tap(handOver.read);
    const last = marker('five');
    await writer.append(TIMELINE, [sent(5, last)], 'any');
    await eventually(() => seen.length === 5 || undefined);

    expect(seen.map((e) => e.position)).toEqual((await stores.events.readAll()).map((e) => e.position));
    expect(textOf(seen[4])).toBe(last);
  });

  it('opens no handed plaintext of a key destroyed before the event is read: the event reads erased, as from the log', async () => {
    liveLog.tap(handOver.read);
    const text = marker('gone');
    await writer.append(TIMELINE, [sent(1, text)], 'any');
    // Handed over (the live log read the commit back) before anything reads it...
    await eventually(() => liveLog.position !== null || undefined);
    // ...then the message is deleted, which destroys its key.
    await writer.append('message-acme.1', [deleted(1)], 'any');
    const seen = follow();
    await eventually(() => seen.length === 2 || undefined);

    expect(seen[0].data).toMatchObject({ erased: true });
    expect(JSON.stringify(seen)).not.toContain(text);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { RecordedEvent } from '../../shared/domain/event';
import { EventToAppend } from '../../shared/ports/event-store.port';
import { messagesProjection } from '../../../projections/messages/messages.projection';
import { threadsProjection } from '../../../projections/threads/threads.projection';
import { contentReadStream } from '../inspector/domain/content-read.decider';
import { messagesStream, messageStream } from '../messages/domain/message.decider';
import { AuditPage } from './entity-history';
import { CONTENT_READS_SCANNED, MessageHistory } from './message-history';
import { CountingStore } from '../../../test/support/counting-event-store';

const SENDS = 2_000;
const WATCHED = 777;
const meta = { occurred_at: '2026-01-01T00:00:00.000Z', actor: { key_id: 'k', su: true } };
const event = (type: string, data: Record<string, unknown>): EventToAppend => ({ type, data, metadata: meta });
const read = (first: number, last: number): EventToAppend => event('MessageContentRead', { room_id: 'lobby', message_count: 2, first_message_id: first, last_message_id: last, read_at: meta.occurred_at });

/**
 * One message's history in a long timeline with many recorded content reads: pages add up to
 * it in log order, the send is found by a binary search, and a page reads a bounded number of
 * content reads (stopping early, with `next`, past CONTENT_READS_SCANNED of them).
 */
describe('a message history page', () => {
  let dir: string;
  let sqlite: SqliteEventStore;
  let readModels: SqliteReadModelStore;
  let counting: CountingStore;
  let history: MessageHistory;
  let expected: RecordedEvent[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-message-history-'));
    sqlite = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    // A message's room is found in the room's messages, else in the thread replies (a thread-only reply's).
    await readModels.ensureCollections([...messagesProjection.collections, ...threadsProjection.collections]);
    const timeline = messagesStream('acme', 'lobby');
    const reads = contentReadStream('acme', 'lobby');
    // A read recorded before the message was sent cannot have shown it, whatever its range.
    await sqlite.append(reads, [read(1, 5_000)], 'any');
    for (let block = 0; block < SENDS / 100; block++) {
      const sends = Array.from({ length: 100 }, (_, i) => event('MessageSent', { id: block * 100 + i + 1, user_id: 'alice', parts: [], room_created_at: meta.occurred_at, created_at: meta.occurred_at }));
      // A timeline from before messages had their own streams holds edits too: the search steps over them.
      sends.splice(50, 0, event('MessageEdited', { id: block * 100 + 10, parts: [], updated_at: meta.occurred_at }));
      await sqlite.append(timeline, sends, 'any');
      // Many reads of other pages of the room; now and then one of a page that holds the message.
      await sqlite.append(reads, Array.from({ length: 300 }, (_, i) => (i === 150 ? read(WATCHED - 1, WATCHED + 1) : read(1_500, 1_520))), 'any');
      if (block === 10) await sqlite.append(messageStream('acme', WATCHED), [event('MessageEdited', { id: WATCHED, room_id: 'lobby', parts: [], updated_at: meta.occurred_at })], 'any');
    }
    await sqlite.append(messageStream('acme', WATCHED), [event('MessageDeleted', { id: WATCHED, room_id: 'lobby', tombstone: false, deleted_at: meta.occurred_at })], 'any');
    const log = await sqlite.readAll({ maxCount: 100_000 });
    const sent = log.find((e) => e.type === 'MessageSent' && (e.data as { id: number }).id === WATCHED)!;
    expected = log.filter((e) => {
      const data = e.data as Record<string, number>;
      if (e === sent || e.streamName === messageStream('acme', WATCHED)) return true;
      return e.type === 'MessageContentRead' && e.position > sent.position && data.first_message_id <= WATCHED && WATCHED <= data.last_message_id;
    });
    counting = new CountingStore(sqlite);
    history = new MessageHistory(counting.events, readModels);
  }, 60_000);

  afterAll(async () => {
    await sqlite.close();
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds up, page by page, to the send, the edit, the reads that showed it and the deletion, in log order', async () => {
    expect(expected.map((e) => e.type)).toEqual(['MessageSent', ...Array(4).fill('MessageContentRead'), 'MessageEdited', ...Array(9).fill('MessageContentRead'), 'MessageDeleted']);
    for (const limit of [4, 8]) {
      const seen: string[] = [];
      let short = 0;
      let page: AuditPage | null = await history.page('acme', WATCHED, { limit, roomId: 'lobby' });
      for (;;) {
        seen.push(...page!.events.map((e) => e.id));
        expect(page!.events.length).toBeLessThanOrEqual(limit);
        if (page!.next === null) break;
        if (page!.events.length < limit) short++;
        page = await history.page('acme', WATCHED, { from: page!.next, limit, roomId: 'lobby' });
      }
      expect([limit, seen]).toEqual([limit, expected.map((e) => e.id)]);
      // Pages of 8 need more content reads than a page reads: some stop early, and the next goes on from there.
      if (limit === 8) expect(short).toBeGreaterThan(0);
    }
  });

  it('finds the send by a binary search and reads a bounded number of content reads', async () => {
    counting.reset();
    const page = await history.page('acme', WATCHED, { limit: 1, roomId: 'lobby' });
    expect(page!.events.map((e) => e.type)).toEqual(['MessageSent']);
    // The own stream twice, the timeline's newest and about log2(length) probes (each may step
    // over an edit), and the content reads up to the second match.
    expect(counting.reads).toBeLessThan(2 + 1 + 3 * Math.ceil(Math.log2(SENDS * 1.01)) + 1 + Math.ceil(Math.log2(SENDS * 3)) + 2);
    counting.reset();
    const far = await history.page('acme', WATCHED, { from: expected[1].position, limit: 100, roomId: 'lobby' });
    expect(counting.eventsRead).toBeLessThan(CONTENT_READS_SCANNED + 100);
    // Stopped at the cap: short of the end, with where to go on from.
    expect(far!.next).not.toBeNull();
    expect(far!.events.map((e) => e.id)).toEqual(expected.slice(2, 2 + far!.events.length).map((e) => e.id));
    expect(far!.events.length).toBeLessThan(expected.length - 2);
  });

  it('answers nothing for a message nothing names', async () => {
    expect(await history.page('acme', 999_999, { limit: 10, roomId: 'lobby' })).toBeNull();
    expect(await history.page('acme', 999_999, { limit: 10 })).toBeNull();
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { RecordedEvent } from '../../shared/domain/event';
import { EventToAppend } from '../../shared/ports/event-store.port';
import { auditIndexProjection } from '../../../projections/audit/audit-index.projection';
import { isRef, ProjectionDefinition } from '../../../projections/projection';
import { attachmentStream } from '../attachments/domain/attachment.decider';
import { messagesStream, messageStream } from '../messages/domain/message.decider';
import { roomStream } from '../rooms/domain/room.decider';
import { AuditPage, EntityHistory } from './entity-history';
import { CountingStore } from '../../../test/support/counting-event-store';


const SENDS = 300;
const meta = { occurred_at: '2026-01-01T00:00:00.000Z', actor: { user_id: 'alice' } };
const one = (type: string, data: Record<string, unknown>): EventToAppend[] => [{ type, data, metadata: meta }];

describe('a room history page with many sends', () => {
  let dir: string;
  let sqlite: SqliteEventStore;
  let readModels: SqliteReadModelStore;
  let counting: CountingStore;
  let history: EntityHistory;
  /** The room's whole history, in log order: what the pages must add up to. */
  let expected: RecordedEvent[];
  const subject = { kind: 'room', instanceId: 'acme', id: 'lobby' } as const;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-entity-history-'));
    sqlite = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    await readModels.ensureCollections(auditIndexProjection.collections ?? []);
    const room = roomStream('acme', 'lobby');
    await sqlite.append(room, one('RoomCreated', { room_id: 'lobby' }), 'any');
    await sqlite.append(attachmentStream('acme', 'early'), one('AttachmentCreated', { room_id: 'lobby' }), 'any');
    for (let i = 1; i <= SENDS; i++) {
      await sqlite.append(messagesStream('acme', 'lobby'), one('MessageSent', { id: i, room_id: 'lobby' }), 'any');
      // Another room's traffic between the sends: the room's positions are not contiguous.
      await sqlite.append(messagesStream('acme', 'other'), one('MessageSent', { id: 10_000 + i, room_id: 'other' }), 'any');
      if (i % 40 === 0) await sqlite.append(room, one('RoomUpdated', { room_id: 'lobby', name: `n${i}` }), 'any');
      if (i % 45 === 0) await sqlite.append(messageStream('acme', i - 1), one('MessageEdited', { id: i - 1, room_id: 'lobby' }), 'any');
      if (i % 70 === 0) await sqlite.append('user_roles-acme.bob', one('UserRoleAssigned', { room_id: 'lobby', role: 'admin' }), 'any');
      // The early attachment's later events do not name the room.
      if (i === 200) await sqlite.append(attachmentStream('acme', 'early'), one('AttachmentUploaded', {}), 'any');
    }
    // The audit index, folded from the log as its projector would (which holds it as any projection).
    const log = await sqlite.readAll({ maxCount: 100_000 });
    const projection: ProjectionDefinition = auditIndexProjection;
    const changes = log.flatMap((event) =>
      projection.targets(event).filter(isRef).map((target) => ({
        collection: target.collection,
        kind: 'put' as const,
        document: projection.evolve(null, event, target)!,
        position: event.position,
      })),
    );
    await readModels.applyBatch(changes, {});
    const own = new Set([room, messagesStream('acme', 'lobby'), attachmentStream('acme', 'early')]);
    expected = log.filter((e) => own.has(e.streamName) || (e.data as { room_id?: string }).room_id === 'lobby');
    counting = new CountingStore(sqlite);
    history = new EntityHistory(counting.events, readModels);
  });

  afterAll(async () => {
    await sqlite.close();
    await readModels.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds up, page by page, to the whole history in log order', async () => {
    const seen: string[] = [];
    let page: AuditPage = await history.page(subject, { limit: 25 });
    for (seen.push(...page.events.map((e) => e.id)); page.next !== null; seen.push(...page.events.map((e) => e.id))) {
      page = await history.page(subject, { from: page.next, limit: 25 });
    }
    expect(seen).toEqual(expected.map((e) => e.id));
    const whole = await history.page(subject, { limit: Number.MAX_SAFE_INTEGER });
    expect(whole.events.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(whole.next).toBeNull();
  });

  it('reads a page from the middle for the cost of the page, not of the history', async () => {
    const limit = 10;
    const start = Math.floor(expected.length / 2);
    counting.reset();
    const page = await history.page(subject, { from: expected[start].position, limit });
    expect(page.events.map((e) => e.id)).toEqual(expected.slice(start + 1, start + 1 + limit).map((e) => e.id));
    expect(page.next).toBe(expected[start + limit].position);
    // Three streams (room, timeline, attachment): a search each (one read backwards and about
    // log2(length) single reads), then at most limit + 1 events; plus limit + 1 index-pointed events.
    const search = 2 + Math.ceil(Math.log2(expected.length));
    const bound = 3 * (search + limit + 1) + (limit + 1);
    expect(counting.eventsRead).toBeLessThanOrEqual(bound);
    expect(counting.reads).toBeLessThanOrEqual(bound);
    expect(bound).toBeLessThan(expected.length / 3);
  });

  it('ends with the last page and answers nothing after the history', async () => {
    const last = await history.page(subject, { from: expected[expected.length - 4].position, limit: 3 });
    expect(last.events.map((e) => e.id)).toEqual(expected.slice(-3).map((e) => e.id));
    expect(last.next).toBeNull();
    const after = await history.page(subject, { from: expected[expected.length - 1].position, limit: 3 });
    expect(after).toMatchObject({ events: [], next: null });
  });
});

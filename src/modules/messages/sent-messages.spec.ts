import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { InstanceEpochs } from '../../shared/application/write-path/instance-epochs';
import { ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { INSTANCE_WIPED, instanceWipesStream } from '../../shared/domain/instance-wipe';
import { EventToAppend } from '../../shared/ports/event-store.port';
import { messageDecider, messagesStream, messageStream, timelineDecider } from './domain/message.decider';
import { SentMessages } from './sent-messages';
import { CountingStore } from '../../../test/support/counting-event-store';


/** Message writes here answer at the append (`awaitProjections: []`): nothing to wait for. */
const noProjections: ReadYourWrites = { waitFor: async () => undefined };

const MESSAGES = 20_000;
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };
/** Ids grow with gaps (other rooms share the instance's ids); every 1000th slot is a pre-split edit. */
const idAt = (i: number) => 3 * i + 1;

describe('a message in a long timeline', () => {
  let dir: string;
  let sqlite: SqliteEventStore;
  let counting: CountingStore;
  const stream = messagesStream('acme', 'lobby');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-sent-'));
    sqlite = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    let revision = -1;
    for (let start = 0; start < MESSAGES; start += 1000) {
      const batch: EventToAppend[] = [];
      for (let i = start; i < start + 1000; i++) {
        batch.push({
          type: 'MessageSent',
          data: { id: idAt(i), user_id: `u${i % 7}`, parts: [], room_created_at: 'r1', created_at: 't' },
          metadata: meta,
        });
        // Timelines written before edits had their own streams hold them inline.
        if (i % 1000 === 500) batch.push({ type: 'MessageEdited', data: { id: idAt(i - 3), parts: [], updated_at: 't' }, metadata: meta });
      }
      revision = (await sqlite.append(stream, batch, revision < 0 ? 'no_stream' : revision)).nextExpectedRevision;
    }
    counting = new CountingStore(sqlite);
  });
  afterAll(async () => {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the timeline state from its newest message alone, after a restart (cold cache)', async () => {
    const pipeline = new CommandPipeline(counting.events, noProjections);
    counting.reset();
    const { state, revision } = await pipeline.load(stream, timelineDecider);
    expect(state).toEqual({ lastId: idAt(MESSAGES - 1) });
    expect(revision).toBe(MESSAGES + MESSAGES / 1000 - 1);
    expect(counting.eventsRead).toBeLessThanOrEqual(16);
  });

  it('finds any message with a bounded number of single-event reads, and nothing for ids it lacks', async () => {
    const sent = new SentMessages(new CommandPipeline(counting.events, noProjections));
    const bound = 2 * Math.ceil(Math.log2(MESSAGES)) + 4;
    for (const i of [0, 1, 499, 500, 501, 502, 9_999, 12_345, MESSAGES - 2, MESSAGES - 1]) {
      counting.reset();
      expect(await sent.find('acme', 'lobby', idAt(i))).toEqual({ userId: `u${i % 7}`, roomCreatedAt: 'r1', createdAt: 't' });
      expect(counting.reads).toBeLessThanOrEqual(bound);
      expect(counting.eventsRead).toBeLessThanOrEqual(bound + 32);
    }
    for (const missing of [0, 2, idAt(700) + 1, idAt(MESSAGES - 1) + 1]) {
      counting.reset();
      expect(await sent.find('acme', 'lobby', missing)).toBeNull();
      expect(counting.reads).toBeLessThanOrEqual(bound);
    }
    expect(await sent.find('acme', 'elsewhere', idAt(3))).toBeNull();
  });

  it('edits and deletes a message through its own stream, reading that message alone', async () => {
    const pipeline = new CommandPipeline(counting.events, noProjections);
    const sent = new SentMessages(pipeline);
    const change = {
      id: idAt(4242),
      roomId: 'lobby',
      roomCreatedAt: 'r1',
      actor: { userId: 'u0', userCreatedAt: '2026-01-01T00:00:00.000Z', su: false },
      now: 't2',
    };
    counting.reset();
    const found = await sent.find('acme', 'lobby', change.id);
    const edit = await pipeline.run(
      messageStream('acme', change.id),
      messageDecider,
      { ...change, type: 'EditMessage', sent: found, parts: [{ type: 'text/plain', content: 'edited' }] },
      meta,
      { awaitProjections: [] },
    );
    expect(edit.events).toEqual([
      { type: 'MessageEdited', data: { id: change.id, room_id: 'lobby', parts: [{ type: 'text/plain', content: 'edited' }], updated_at: 't2' } },
    ]);
    await pipeline.run(messageStream('acme', change.id), messageDecider, { ...change, type: 'DeleteMessage', sent: found, tombstone: false }, meta, {
      awaitProjections: [],
    });
    expect(counting.eventsRead).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(MESSAGES)) + 40);

    // A second process (a cold cache) sees the deletion from the message's newest event.
    const elsewhere = new CommandPipeline(counting.events, noProjections);
    await expect(
      elsewhere.run(messageStream('acme', change.id), messageDecider, { ...change, type: 'DeleteMessage', sent: found, tombstone: false }, meta, {
        awaitProjections: [],
      }),
    ).rejects.toMatchObject({ code: 'not_found/message_not_found' });
  });

  it('does not find messages sent before the instance was wiped', async () => {
    const timeline = messagesStream('wiped', 'lobby');
    const sentEvent = (id: number): EventToAppend => ({
      type: 'MessageSent',
      data: { id, user_id: 'ann', parts: [], room_created_at: 'r1', created_at: 't' },
      metadata: meta,
    });
    await sqlite.append(timeline, [1, 2, 3].map(sentEvent), 'no_stream');
    await sqlite.append(instanceWipesStream('wiped'), [{ type: INSTANCE_WIPED, data: {}, metadata: meta }], 'no_stream');
    // Ids keep growing across a wipe (the id sequence is the instance's, not an entity's).
    await sqlite.append(timeline, [4, 5].map(sentEvent), 2);
    const sent = new SentMessages(new CommandPipeline(sqlite, noProjections, new InstanceEpochs(sqlite)));
    for (const id of [1, 2, 3]) expect(await sent.find('wiped', 'lobby', id)).toBeNull();
    for (const id of [4, 5]) expect(await sent.find('wiped', 'lobby', id)).toEqual({ userId: 'ann', roomCreatedAt: 'r1', createdAt: 't' });
  });
});

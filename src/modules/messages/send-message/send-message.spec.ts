import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../../adapters/event-store/sqlite/sqlite-event-store';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { ReadYourWrites } from '../../../shared/application/write-path/read-your-writes';
import { MAX_ATTEMPTS } from '../../../shared/application/write-path/stream-writer';
import { systemClock } from '../../../shared/domain/clock';
import { DomainError } from '../../../shared/domain/errors';
import { EventStore } from '../../../shared/ports/event-store.port';
import { LiveLog } from '../../../shared/subscriptions/live-log';
import { withOverrides } from '../../../../test/support/event-store-overrides';
import { RolePermissions } from '../../roles/role-permissions';
import { roomDecider, roomStream } from '../../rooms/domain/room.decider';
import { RoomAccess } from '../../rooms/room-access';
import { userDecider, userStream } from '../../users/domain/user.decider';
import { messagesStream, timelineDecider } from '../domain/message.decider';
import { MessageSent } from '../domain/message.events';
import { MessageIds } from '../message-ids';
import { SendMessageCommand, SendMessageHandler } from './send-message';

/** Sends here are answered at the append: no read model is involved. */
const answered: ReadYourWrites = { waitFor: async () => undefined };
const now = '2026-01-01T00:00:00.000Z';
const actor = { user_id: 'ann' };
const send = (text: string) => new SendMessageCommand('acme', 'lobby', 'ann', [{ type: 'text/plain', content: text }], actor, false);

/** One server process's write side over the shared log file: its own store connection, pipeline (state cache, queues) and id blocks. */
function processOn(file: string, wrap: (events: EventStore) => EventStore = (events) => events) {
  const store = new SqliteEventStore(file, { synchronous: 'NORMAL' });
  const events = wrap(store);
  const pipeline = new CommandPipeline(events, answered);
  const access = new RoomAccess(pipeline, new RolePermissions(pipeline, new LiveLog(events)));
  return { store, pipeline, sends: new SendMessageHandler(pipeline, access, new MessageIds(pipeline), systemClock) };
}

const answerOf = (outcome: Promise<unknown>) =>
  outcome.then(
    (id) => `ok ${String(id)}`,
    (error: unknown) => (error instanceof DomainError ? `${error.code}: ${error.description}` : `unexpected: ${String(error)}`),
  );

describe('sending messages to one room from several processes at once', () => {
  let dir: string;
  let file: string;
  const opened: SqliteEventStore[] = [];
  const open = (wrap?: (events: EventStore) => EventStore) => {
    const process = processOn(file, wrap);
    opened.push(process.store);
    return process;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-send-'));
    file = join(dir, 'events.sqlite');
    const { pipeline } = open();
    await pipeline.run(userStream('acme', 'ann'), userDecider, { type: 'CreateUser', id: 'ann', name: 'Ann', now }, { occurred_at: now });
    await pipeline.run(
      roomStream('acme', 'lobby'),
      roomDecider,
      { type: 'CreateRoom', id: 'lobby', name: 'Lobby', private: false, members: [{ user_id: 'ann', user_created_at: now }], now },
      { occurred_at: now },
    );
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The room's timeline as the log holds it: each message's id and text, in log order. */
  const timeline = async () =>
    (await opened[0].readStream(messagesStream('acme', 'lobby')))
      .filter((e) => e.type === 'MessageSent')
      .map((e) => {
        const data = e.data as MessageSent['data'];
        return { id: data.id, text: (data.parts[0] as { content: string }).content };
      });

  it('every send is saved with its own id, the ids strictly increasing along the room timeline', async () => {
    const [first, second] = [open(), open()];
    const texts = Array.from({ length: 60 }, (_, i) => `m${i}`);
    const ids = await Promise.all(texts.map((text, i) => (i % 2 ? second : first).sends.execute(send(text))));

    expect(new Set(ids).size).toBe(texts.length);
    const saved = await timeline();
    expect(saved.map((m) => m.id)).toEqual([...ids].sort((a, b) => a - b));
    for (let i = 1; i < saved.length; i++) expect(saved[i].id).toBeGreaterThan(saved[i - 1].id);
    // Each sender was told the id its message was saved with.
    expect(new Map(saved.map((m) => [m.text, m.id]))).toEqual(new Map(texts.map((text, i) => [text, ids[i]])));
  });

  it(`a send that loses the race to another process's sends every time loses ${MAX_ATTEMPTS} races at most, then answers 409 with nothing of it saved`, async () => {
    // The other process's id block lies above this one's: each of its sends outdates this one's id.
    const other = open();
    let lost = 0;
    const racing = open((events) =>
      withOverrides(events, {
        append: async (...args: Parameters<EventStore['append']>) => {
          const [stream, appended] = args;
          // Bounded, so that a send retrying without bound ends too (and the test shows it was not refused).
          if (stream === messagesStream('acme', 'lobby') && lost < 5 * MAX_ATTEMPTS) {
            lost++;
            const id = (appended[0].data as MessageSent['data']).id + 1;
            const parts = [{ type: 'text/plain', content: `first ${lost}` }];
            await other.pipeline.run(
              stream,
              timelineDecider,
              { type: 'SendMessage', id, userId: 'ann', userCreatedAt: now, parts, roomCreatedAt: now, now },
              { occurred_at: now },
              { awaitProjections: [] },
            );
          }
          return events.append(...args);
        },
      }),
    );

    expect(await answerOf(racing.sends.execute(send('never saved')))).toBe(
      'conflict/concurrent_modification: The resource was changed by another request at the same time; retry',
    );
    expect(lost).toBe(MAX_ATTEMPTS);
    expect((await timeline()).map((m) => m.text)).toEqual(Array.from({ length: MAX_ATTEMPTS }, (_, i) => `first ${i + 1}`));

    // Once the other process stops winning, the next send goes through, above all of its ids.
    lost = Infinity;
    const id = await racing.sends.execute(send('saved'));
    const saved = await timeline();
    expect(saved[saved.length - 1]).toEqual({ id, text: 'saved' });
    expect(id).toBeGreaterThan(saved[saved.length - 2].id);
  });
});

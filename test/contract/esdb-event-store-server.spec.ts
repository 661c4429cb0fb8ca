import { EventStoreDBClient, jsonEvent, START } from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { EsdbEphemeralBus, EPHEMERAL_STREAM_PREFIX } from '../../src/adapters/ephemeral/esdb-ephemeral-bus';
import { EsdbEventStore } from '../../src/adapters/event-store/esdb/esdb-event-store';
import { esdbPosition } from '../../src/adapters/event-store/esdb/esdb-positions';
import { CommandPipeline } from '../../src/shared/application/write-path/command-pipeline';
import { Decider } from '../../src/shared/domain/decider';
import { DomainError } from '../../src/shared/domain/errors';
import { DomainEvent, RecordedEvent } from '../../src/shared/domain/event';
import {
  AppendOutcomeUnknownError,
  AppendTooLargeError,
  EventStoreUnavailableError,
  EventToAppend,
} from '../../src/shared/ports/event-store.port';
import { describeWithEnv } from './skip-unless-env';
import { eventually, sleep, within } from '../support/waiting';

/**
 * The server's MaxAppendSize: EventStoreDB's default unless the server under test was started
 * with another EVENTSTORE_MAX_APPEND_SIZE, which the suite is then given too.
 */
const SERVER_MAX_APPEND_BYTES = Number(process.env.EVENTSTORE_MAX_APPEND_SIZE || 1024 * 1024);

/**
 * What the EventStoreDB adapter adds to the port on a real server, beyond the shared contract:
 * streams deleted by an operator, subscriptions the server ends, and the ephemeral bus's signal
 * streams kept out of what the log's readers see. Runs against a shared server (random names).
 */
describeWithEnv('EVENTSTORE_CONNECTION_STRING', 'EventStoreDB adapter on a real server', (connectionString) =>
  describe('EsdbEventStore on a real server', () => {
    let client: EventStoreDBClient;
    let store: EsdbEventStore;
    let p: string;

    beforeEach(() => {
      client = EventStoreDBClient.connectionString(connectionString);
      store = new EsdbEventStore(client); // closing the store disposes the client
      p = `ct${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    });
    afterEach(() => store.close());

    it('a tombstoned stream reads as empty; an append to it is a conflict that wrote nothing', async () => {
      const s = `${p}-tomb`;
      await store.append(s, [ev('A'), ev('B')], 'no_stream');
      await client.tombstoneStream(s);
      expect(await store.readStream(s)).toEqual([]);
      expect(await store.readStream(s, { direction: 'backwards', maxCount: 1 })).toEqual([]);
      for (const expected of ['no_stream', 'any'] as const) {
        const error = await store.append(s, [ev('C')], expected).then(
          () => new Error('the append to a tombstoned stream succeeded'),
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('conflict/stream_deleted');
      }
    });

    it('a soft-deleted stream reads as empty and an append expecting no stream recreates it', async () => {
      const s = `${p}-soft`;
      await store.append(s, [ev('A'), ev('B'), ev('C')], 'no_stream');
      await client.deleteStream(s);
      expect(await store.readStream(s)).toEqual([]);
      const again = await store.append(s, [ev('Again')], 'no_stream');
      const events = await store.readStream(s);
      expect(events.map((e) => e.type)).toEqual(['Again']);
      // EventStoreDB keeps the numbering of a soft-deleted stream.
      expect(again.nextExpectedRevision).toBe(events[0].revision);
      await store.append(s, [ev('Then')], again.nextExpectedRevision);
      expect((await store.readStream(s)).map((e) => e.type)).toEqual(['Again', 'Then']);
    });

    it('a subscription the server ends (its stream tombstoned) throws out of the for await', async () => {
      const s = `${p}-ended`;
      await store.append(s, [ev('A')], 'no_stream');
      const subscription = store.subscribeToStream(s);
      const received: RecordedEvent[] = [];
      const consumed = (async () => {
        for await (const event of subscription) received.push(event);
      })();
      await eventually(() => received.length === 1, { timeoutMs: 15_000, everyMs: 10 });
      await client.tombstoneStream(s);
      await expect(within(consumed, 15_000)).rejects.toBeInstanceOf(Error);
      await subscription.close();
    });

    it("the ephemeral bus's signals never reach readAll, headPosition or subscribeToAll", async () => {
      const bus = new EsdbEphemeralBus(connectionString, { timeoutMs: 10_000 });
      const subscription = store.subscribeToAll({ after: await store.headPosition() });
      try {
        const channel = `typing:${p}:r1`;
        const heard: unknown[] = [];
        bus.subscribe(channel, (message) => heard.push(message));
        const before = await store.headPosition();
        const marker = await store.append(`${p}a-1`, [ev('Marker')], 'no_stream');
        // Signals after the marker, until the bus itself has heard five (its subscription starts
        // from the end of the log once confirmed), so they are surely in the log.
        const deadline = Date.now() + 15_000;
        for (let n = 0; heard.length < 5; n++) {
          if (Date.now() > deadline) throw new Error('the ephemeral bus did not hear its own signals');
          await bus.publish(channel, { n });
          await sleep(50);
        }

        const head = (await store.headPosition())!;
        expect(head >= marker.position).toBe(true);
        const read = await store.readAll({ after: before, maxCount: 10_000 });
        expect(read.some((e) => e.streamName === `${p}a-1`)).toBe(true);
        expect(read.filter((e) => e.streamName.startsWith(EPHEMERAL_STREAM_PREFIX))).toEqual([]);
        // The head is an application event (one readAll returns), never a signal, even with other writers.
        expect(read.some((e) => e.position === head)).toBe(true);

        // The subscription: everything up to an end marker appended after the signals.
        await store.append(`${p}a-1`, [ev('End')], marker.nextExpectedRevision);
        const delivered: RecordedEvent[] = [];
        await within(
          (async () => {
            for await (const event of subscription) {
              delivered.push(event);
              if (event.streamName === `${p}a-1` && event.type === 'End') return;
            }
          })(),
          15_000,
        );
        expect(delivered.filter((e) => e.streamName === `${p}a-1`).map((e) => e.type)).toEqual(['Marker', 'End']);
        expect(delivered.filter((e) => e.streamName.startsWith(EPHEMERAL_STREAM_PREFIX))).toEqual([]);
        // The signal stream itself is in the server's log (read directly), only hidden from the port.
        expect(bus.streamName.startsWith(EPHEMERAL_STREAM_PREFIX)).toBe(true);
        const signals = await drainAll(client.readStream(bus.streamName, { fromRevision: START }));
        expect(signals.length).toBeGreaterThanOrEqual(5);
      } finally {
        await subscription.close();
        await bus.close();
      }
    });

    it('an append just over the server\'s MaxAppendSize is refused as too large, and nothing is written', async () => {
      const s = `${p}-large`;
      const over: EventToAppend = { type: 'Large', data: { text: 'x'.repeat(SERVER_MAX_APPEND_BYTES) }, metadata: { occurred_at: new Date().toISOString() } };
      const refused = await store.append(s, [over], 'no_stream').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AppendTooLargeError);
      expect((refused as AppendTooLargeError).maxBytes).toBe(SERVER_MAX_APPEND_BYTES);
      expect(store.maxAppendBytes).toBeLessThanOrEqual(SERVER_MAX_APPEND_BYTES);
      expect(await store.readStream(s)).toEqual([]);
      // Just under it is taken.
      const under: EventToAppend = { ...over, data: { text: 'x'.repeat(SERVER_MAX_APPEND_BYTES - 4_096) } };
      await store.append(s, [under], 'no_stream');
      expect(await store.readStream(s)).toHaveLength(1);
    });

    it('the command pipeline: a busy stream past the limit in all is saved whole, in appends under it; one command over it alone answers 413', async () => {
      const s = `${p}-busy`;
      const pipeline = new CommandPipeline(store, { waitFor: async () => undefined });
      const text = 'm'.repeat(64 * 1024);
      const count = Math.ceil((1.5 * SERVER_MAX_APPEND_BYTES) / text.length);
      const sent = await Promise.all(Array.from({ length: count }, (_, i) => pipeline.run(s, sayer, { type: 'Say', text: `${i}:${text}` }, meta)));
      expect(sent).toHaveLength(count);
      expect((await store.readStream(s)).map((e) => (e.data as { text: string }).text.split(':')[0])).toEqual(Array.from({ length: count }, (_, i) => String(i)));
      const tooLarge = await pipeline.run(s, sayer, { type: 'Say', text: 'x'.repeat(SERVER_MAX_APPEND_BYTES) }, meta).catch((e: unknown) => e);
      expect(tooLarge).toBeInstanceOf(DomainError);
      expect((tooLarge as DomainError).status).toBe(413);
      expect((tooLarge as DomainError).code).toBe('payload_too_large/change_too_large');
      expect(await store.readStream(s)).toHaveLength(count);
    });

    it('two clients in one process: one disposed in the middle of its appends leaves the other\'s appends whole', async () => {
      const other = EventStoreDBClient.connectionString(connectionString);
      const otherStore = new EsdbEventStore(EventStoreDBClient.connectionString(connectionString));
      const mine = Array.from({ length: 40 }, (_, i) => store.append(`${p}m-${i}`, [ev('Mine')], 'no_stream'));
      // Another library's client in the process, appending through the client's own batch path.
      const theirs = Array.from({ length: 40 }, (_, i) => other.appendToStream(`${p}t-${i}`, jsonEvent({ type: 'Theirs', data: {} })));
      const others = Array.from({ length: 40 }, (_, i) => otherStore.append(`${p}o-${i}`, [ev('Other')], 'no_stream'));
      await Promise.all([other.dispose(), otherStore.close()]);
      const results = await Promise.allSettled(mine);
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      for (let i = 0; i < 40; i++) expect((await store.readStream(`${p}m-${i}`)).map((e) => e.type)).toEqual(['Mine']);
      await Promise.allSettled(theirs);
      // The disposed store's appends say what happened to them: done, not sent, or unknown.
      for (const result of await Promise.allSettled(others)) {
        if (result.status === 'rejected') expect(result.reason instanceof AppendOutcomeUnknownError || result.reason instanceof EventStoreUnavailableError).toBe(true);
      }
    });

    it("a multi-event append's reported position is its last event's, commit and prepare alike", async () => {
      const s = `${p}-multi`;
      const written = await client.appendToStream(s, [1, 2, 3].map((n) => jsonEvent({ type: 'Numbered', data: { n } })));
      const events = await store.readStream(s);
      expect(events).toHaveLength(3);
      expect(esdbPosition(written.position!)).toBe(events[2].position);
      expect(written.position!.commit).toBe(written.position!.prepare);
      // And what the store answers for one.
      const appended = await store.append(s, [ev('A'), ev('B')], 2);
      expect(appended.position).toBe((await store.readStream(s, { fromRevision: 4 }))[0].position);
    });
  }),
);

type Said = DomainEvent<'Said', { text: string }>;
const sayer: Decider<{ said: number }, { type: 'Say'; text: string }, Said> = {
  initialState: () => ({ said: 0 }),
  evolve: (state) => ({ said: state.said + 1 }),
  decide: (command) => [{ type: 'Said', data: { text: command.text } }],
};
const meta = { occurred_at: '2026-01-01T00:00:00.000Z' };

const ev = (type: string): EventToAppend => ({ type, data: {}, metadata: { occurred_at: new Date().toISOString() } });

async function drainAll<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

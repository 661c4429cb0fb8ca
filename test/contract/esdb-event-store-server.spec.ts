import { EventStoreDBClient, START } from '@eventstore/db-client';
import { randomUUID } from 'node:crypto';
import { EsdbEphemeralBus, EPHEMERAL_STREAM_PREFIX } from '../../src/adapters/ephemeral/esdb-ephemeral-bus';
import { EsdbEventStore } from '../../src/adapters/event-store/esdb/esdb-event-store';
import { DomainError } from '../../src/shared/domain/errors';
import { RecordedEvent } from '../../src/shared/domain/event';
import { EventToAppend } from '../../src/shared/ports/event-store.port';
import { describeWithEnv } from './skip-unless-env';

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
      await waitUntil(() => received.length === 1);
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
        const signals = await drainAll(client.readStream(`${EPHEMERAL_STREAM_PREFIX}typing.${p}.r1`, { fromRevision: START }));
        expect(signals.length).toBeGreaterThanOrEqual(5);
      } finally {
        await subscription.close();
        await bus.close();
      }
    });
  }),
);

const ev = (type: string): EventToAppend => ({ type, data: {}, metadata: { occurred_at: new Date().toISOString() } });
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function drainAll<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

async function waitUntil(condition: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(10);
  }
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

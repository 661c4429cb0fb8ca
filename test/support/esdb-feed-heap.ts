import { Readable } from 'node:stream';
import { EsdbEventStore } from '../../src/adapters/event-store/esdb/esdb-event-store';

/**
 * Run as `node --expose-gc dist/test/support/esdb-feed-heap.js <events>`: pushes that many
 * events (about 1 KB each) through EsdbEventStore.subscribeToAll from a client subscription
 * that a Readable stands in for (the client's subscription is one), and prints as JSON how much
 * the heap grew, after a full GC, between the 1,000th and the last event, the feed still open.
 * A feed that keeps what it delivered grows by about the size of all the events.
 */
async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 100_000);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const client = { subscribeToAll: () => subscriptionOf(total + 1), dispose: async () => undefined };
  const store = new EsdbEventStore(client as never, { timeoutMs: 60_000 });
  let seen = 0;
  let baseline = 0;
  let grownBytes = 0;
  for await (const event of store.subscribeToAll()) {
    if (event.type !== 'MessageSent') throw new Error(`unexpected ${event.type}`);
    seen++;
    if (seen === 1_000) {
      gc();
      baseline = process.memoryUsage().heapUsed;
    }
    if (seen === total) {
      gc();
      grownBytes = process.memoryUsage().heapUsed - baseline;
      break;
    }
  }
  await store.close();
  process.stdout.write(`${JSON.stringify({ seen, grownBytes })}\n`);
}

/** What the client's subscription delivers: a confirmation, then resolved events, as they are read. */
function subscriptionOf(count: number): Readable {
  let n = 0;
  const stream = new Readable({
    objectMode: true,
    read() {
      for (let i = 0; i < 100 && n < count; i++, n++) {
        const position = BigInt(1_000 + n * 1_200);
        this.push({
          event: {
            streamId: `room-acme.r${n % 10}`,
            id: `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`,
            revision: BigInt(Math.floor(n / 10)),
            type: 'MessageSent',
            data: { text: 'x'.repeat(1_000) + n },
            metadata: { occurred_at: '2026-01-01T00:00:00.000Z' },
            isJson: true,
            contentType: 'application/json',
            created: new Date(),
            position: { commit: position, prepare: position },
          },
        });
      }
    },
  });
  Object.assign(stream, { unsubscribe: async () => undefined });
  process.nextTick(() => stream.emit('confirmation'));
  return stream;
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});

import { createServer, Server, Socket } from 'node:net';
import { AddressInfo } from 'node:net';
import { EsdbEphemeralBus } from '../../ephemeral/esdb-ephemeral-bus';
import { EsdbEventStore, EsdbTimeoutError } from './esdb-event-store';

/**
 * The adapters against an endpoint that accepts TCP and never answers (a hung server, a
 * half-open proxy): the client itself would wait forever, so every call must fail within the
 * adapter's own timeout. Runs everywhere: no EventStoreDB needed, only a real socket.
 */
describe('EventStoreDB adapters against a silent endpoint', () => {
  let server: Server;
  let sockets: Socket[];
  let connectionString: string;
  const timeoutMs = 400;

  beforeAll(async () => {
    sockets = [];
    server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    connectionString = `esdb://127.0.0.1:${(server.address() as AddressInfo).port}?tls=false`;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Fails the test if the promise neither settles within a generous bound: the point is that it settles. */
  const settles = <T>(promise: Promise<T>): Promise<T> =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('still waiting after 10 s')), 10_000).unref()),
    ]);

  it('every call of the event store rejects with EsdbTimeoutError; close() still returns', async () => {
    const store = new EsdbEventStore(connectionString, { timeoutMs });
    try {
      const event = { type: 'Happened', data: {}, metadata: { occurred_at: new Date().toISOString() } };
      await expect(settles(store.append('ct-silent', [event], 'any'))).rejects.toBeInstanceOf(EsdbTimeoutError);
      await expect(settles(store.readStream('ct-silent'))).rejects.toBeInstanceOf(EsdbTimeoutError);
      await expect(settles(store.readAll({ maxCount: 10 }))).rejects.toBeInstanceOf(EsdbTimeoutError);
      await expect(settles(store.headPosition())).rejects.toBeInstanceOf(EsdbTimeoutError);
      // A subscription that is never confirmed throws out of the consumer's loop, for both kinds.
      for (const subscription of [store.subscribeToAll(), store.subscribeToStream('ct-silent')]) {
        const consumed = (async () => {
          for await (const _ of subscription) throw new Error('a silent endpoint delivered an event');
        })();
        await expect(settles(consumed)).rejects.toBeInstanceOf(EsdbTimeoutError);
      }
    } finally {
      await settles(store.close());
    }
  });

  it('the ephemeral bus: publish rejects in time, and close() returns', async () => {
    const errors: unknown[] = [];
    const bus = new EsdbEphemeralBus(connectionString, { timeoutMs, onError: (e) => errors.push(e) });
    try {
      const unsubscribe = bus.subscribe('typing:acme:r1', () => undefined);
      await expect(settles(bus.publish('typing:acme:r1', { user: 'alice' }))).rejects.toThrow(/did not answer/);
      unsubscribe();
    } finally {
      await settles(bus.close());
    }
  });
});

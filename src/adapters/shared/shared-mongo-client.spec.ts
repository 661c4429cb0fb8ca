import { createServer, Server } from 'node:net';
import { startSilentMongo } from '../../../test/support/silent-mongo';
import { acquireMongoClient, SERVER_SELECTION_TIMEOUT_MS } from './shared-mongo-client';

/**
 * The failure paths, against a real socket that is not a MongoDB server (the sharing itself is
 * exercised by the MongoDB contract suites when MONGODB_URI is set: the three adapters then
 * connect through it).
 */
describe('acquireMongoClient', () => {
  let server: Server;
  let uri: string;
  let connections = 0;

  beforeAll(async () => {
    // Accepts and closes at once: the driver's handshake fails quickly, as with a wrong port.
    server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    uri = `mongodb://127.0.0.1:${port}/?serverSelectionTimeoutMS=300&directConnection=true`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('rejects when the server cannot be reached, and the next caller tries afresh', async () => {
    await expect(acquireMongoClient(uri)).rejects.toThrow();
    const before = connections;
    await expect(acquireMongoClient(uri)).rejects.toThrow();
    expect(connections).toBeGreaterThan(before);
  });

  it('gives every concurrent caller the same failure, from one client', async () => {
    const results = await Promise.allSettled([acquireMongoClient(uri), acquireMongoClient(uri), acquireMongoClient(uri)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    const reasons = results.map((r) => (r as PromiseRejectedResult).reason);
    expect(reasons[1]).toBe(reasons[0]);
    expect(reasons[2]).toBe(reasons[0]);
  });

  it('waits at most 10 s for a usable server unless the URI sets its own bound', async () => {
    const silent = await startSilentMongo();
    try {
      const shared = await acquireMongoClient(silent.uri);
      expect(shared.client.options.serverSelectionTimeoutMS).toBe(SERVER_SELECTION_TIMEOUT_MS);
      expect(SERVER_SELECTION_TIMEOUT_MS).toBe(10_000);
      await shared.release();
      const own = await acquireMongoClient(`${silent.uri}&serverSelectionTimeoutMS=2500`);
      expect(own.client.options.serverSelectionTimeoutMS).toBe(2500);
      await own.release();
    } finally {
      await silent.close();
    }
  });
});

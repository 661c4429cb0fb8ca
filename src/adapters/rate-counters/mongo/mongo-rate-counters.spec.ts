import { MongoClient } from 'mongodb';
import { createServer, Server, Socket } from 'node:net';
import { startSilentMongo, SilentMongo } from '../../../../test/support/silent-mongo';
import { MongoRateCounters } from './mongo-rate-counters';

/**
 * Every counter call has a deadline, without a MongoDB server: a real driver against a local
 * endpoint that speaks the wire protocol and stops answering, and against one that accepts
 * connections and never says anything. The counting itself is the contract suite's
 * (test/contract/mongo-rate-counters.spec.ts, where MONGODB_URI is set).
 */
describe('MongoRateCounters when MongoDB does not answer', () => {
  const bucket = { capacity: 10, perSecond: 10 };

  it('fails each call within its budget when the primary stops answering, so the caller serves the request', async () => {
    const silent: SilentMongo = await startSilentMongo();
    const client = await new MongoClient(silent.uri).connect();
    const counters = new MongoRateCounters(client, 'parley_silent');
    try {
      await expect(counters.hit('chat-user:acme:alice', 10_000, Date.now())).rejects.toThrow();
      await expect(counters.take('beams-publish:acme', bucket, Date.now())).rejects.toThrow();
      // Both reached the server, which never answered.
      expect(silent.commands).toEqual(['findAndModify', 'findAndModify']);
    } finally {
      await counters.close();
      await silent.close();
    }
  }, 10_000);

  it('fails each call within its budget when MongoDB cannot be reached (no answer to the handshake)', async () => {
    const sockets = new Set<Socket>();
    const mute: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    const { port } = mute.address() as { port: number };
    const client = new MongoClient(`mongodb://127.0.0.1:${port}/?directConnection=true`);
    const counters = new MongoRateCounters(client, 'parley_unreachable');
    try {
      await expect(counters.hit('chat-user:acme:alice', 10_000, Date.now())).rejects.toThrow();
      await expect(counters.take('beams-publish:acme', bucket, Date.now())).rejects.toThrow();
    } finally {
      await counters.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => mute.close(() => resolve()));
    }
  }, 10_000);
});

import Fastify, { FastifyInstance } from 'fastify';
import { MongoClient } from 'mongodb';
import { MongoRateCounters } from '../../adapters/rate-counters/mongo/mongo-rate-counters';
import { startSilentMongo, SilentMongo } from '../../../test/support/silent-mongo';
import { registerRateLimits } from './rate-limit';

/**
 * A request waits for its rate limit only so long: with counters in a MongoDB that stopped
 * answering (a local endpoint speaking the wire protocol, then silent; the counters' own budget
 * set far beyond the deadline), a limited request is served without a limit and a warning is
 * logged, instead of waiting for the store.
 */
describe('rate limits when the counters stall', () => {
  let silent: SilentMongo;
  let counters: MongoRateCounters;
  let app: FastifyInstance;
  const warnings: string[] = [];

  beforeAll(async () => {
    silent = await startSilentMongo();
    const client = await new MongoClient(silent.uri).connect();
    counters = new MongoRateCounters(client, 'parley_silent', () => client.close(), 600_000);
    app = Fastify();
    registerRateLimits(
      app,
      { perUser: 500, perInstance: 20_000, windowMs: 10_000, su: false, anonymousPerAddress: 0, anonymousPerInstance: 0 },
      counters,
      { verify: async () => ({ userId: 'alice', su: false }) },
      { warn: (_details, message) => warnings.push(message) },
    );
    app.get('/services/chatkit/v6/:instanceId/users', async () => [{ id: 'alice' }]);
    await app.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await app.close();
    await counters.close();
    await silent.close();
  });

  it('serves a limited request without a limit and logs a warning', async () => {
    const { port } = app.server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/services/chatkit/v6/acme/users`, { headers: { authorization: 'Bearer t' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([{ id: 'alice' }]);
    expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    expect(warnings).toEqual(['rate limit counters failed; request served without a limit']);
    expect(silent.commands).toContain('findAndModify');
  }, 10_000);
});

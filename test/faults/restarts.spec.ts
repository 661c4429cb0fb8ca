import { openHttpSubscription } from '../support/subscribe-client';
import { chat, eventually, FaultLab, health, INSTANCE, processEnv, tokenFor } from './process-client';
import { sleep } from '../support/waiting';

/**
 * Restarts as an operator causes them: `kill -9` under load, a restart with no writes, a
 * projector worker killed and replaced. Every acknowledged write must survive, and the server
 * must serve again promptly without anyone writing first.
 */
describe('restarts and crashes (real processes, real signals)', () => {
  const lab = new FaultLab();
  afterEach(() => lab.stopAll());
  afterAll(() => lab.cleanUp());

  const embedded = (dir: string) => lab.start('dist/src/main.js', processEnv(dir));
  /**
   * A lease lasting far longer than a write may wait for its projections: a restarted server that
   * waited out its dead predecessor's leases instead of taking them over would answer its first
   * write 503 projection_lag, whatever the machine's speed.
   */
  const leaseOutlastsWrites = { PROJECTION_LEASE_TTL_MS: '600000', READ_YOUR_WRITES_TIMEOUT_MS: '20000' };

  it("keeps every acknowledged message across three kill -9s under concurrent sends, and acknowledges the first send after each restart without waiting out the dead process's leases", async () => {
    const dir = lab.dataDir();
    const restart = () => lab.start('dist/src/main.js', processEnv(dir, leaseOutlastsWrites));
    let server = await restart();
    expect((await chat(server.port, 'POST', '/users', { id: 'writer', name: 'W' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/rooms', { id: 'load', name: 'load', user_ids: ['writer'] })).status).toBe(201);

    const acknowledged = new Map<number, string>(); // message id → text the client was told is saved
    for (let round = 0; round < 3; round++) {
      let sending = true;
      const port = server.port;
      const writers = Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; sending; i++) {
          const text = `r${round}-w${w}-${i}`;
          const answer = await chat(port, 'POST', '/rooms/load/messages', { text }, { sub: 'writer', version: 'v2' });
          if (answer.status === 201) acknowledged.set(answer.body.message_id, text);
          else if (answer.status === 0) return; // the server died under this request: no promise was made
        }
      });
      await sleep(400);
      await server.stop('SIGKILL');
      sending = false;
      await Promise.all(writers);

      server = await restart();
      expect((await health(server.port)).status).toBe(200);
      const first = await chat(server.port, 'POST', '/rooms/load/messages', { text: `after-${round}` }, { sub: 'writer', version: 'v2' });
      expect(first.status).toBe(201);
      acknowledged.set(first.body.message_id, `after-${round}`);
    }

    const stored = new Map<number, string>();
    for (let after = 0; ; ) {
      const page = await chat(server.port, 'GET', `/rooms/load/messages?direction=newer&initial_id=${after}&limit=100`, undefined, {
        sub: 'writer',
        version: 'v2',
      });
      expect(page.status).toBe(200);
      for (const m of page.body) stored.set(m.id, m.text);
      if (page.body.length < 100) break;
      after = Math.max(...page.body.map((m: { id: number }) => m.id));
    }
    expect(acknowledged.size).toBeGreaterThan(10);
    for (const [id, text] of acknowledged) expect([id, stored.get(id)]).toEqual([id, text]);
  }, 120_000);

  it('opens subscriptions right after a restart with no writes (clean stop and kill -9)', async () => {
    const dir = lab.dataDir();
    let server = await embedded(dir);
    expect((await chat(server.port, 'POST', '/users', { id: 'alice', name: 'A' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/rooms', { id: 'quiet', name: 'quiet', user_ids: ['alice'] })).status).toBe(201);
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      await server.stop(signal);
      server = await embedded(dir);
      const base = `http://127.0.0.1:${server.port}/services/chatkit/v6/${INSTANCE}`;
      const auth = { authorization: `Bearer ${tokenFor({ sub: 'alice' })}` };
      const users = await openHttpSubscription(`${base}/users`, auth);
      expect(users.status).toBe(200);
      expect((await users.nextEvent()).body.event_name).toBe('initial_state');
      const room = await openHttpSubscription(`${base}/rooms/quiet?message_limit=5`, auth);
      expect(room.status).toBe(200);
      const memberships = await openHttpSubscription(`${base}/rooms/quiet/memberships`, auth);
      expect((await memberships.nextEvent()).body.event_name).toBe('initial_state');
      // And it is live: a message sent now arrives.
      const text = `hello after ${signal}`;
      expect((await chat(server.port, 'POST', '/rooms/quiet/messages', { text }, { sub: 'alice', version: 'v2' })).status).toBe(201);
      const contents: string[] = [];
      while (!contents.includes(text)) contents.push((await room.nextEvent()).body.data.parts[0].content);
      await Promise.all([users.close(), room.close(), memberships.close()]);
    }
  }, 60_000);

  it('refuses a second embedded server on the same DATA_DIR, naming the holder', async () => {
    const dir = lab.dataDir();
    await embedded(dir);
    await expect(embedded(dir)).rejects.toThrow(/DATA_DIR .* is in use by another Parley process/);
  }, 30_000);

  it('an API process starts before any projector worker, says so in /health, and serves once a worker folds', async () => {
    const dir = lab.dataDir();
    const env = processEnv(dir, { READINESS_MAX_LAG_MS: '500', READ_YOUR_WRITES_TIMEOUT_MS: '1000' });
    const api = await lab.start('dist/src/main.api.js', env);
    expect(await eventually(async () => {
      const answer = await health(api.port);
      return answer.status === 503 && /behind the log/.test(answer.body.problems.join(' '));
    }, 10_000)).toBe(true);
    await lab.startWorker(env);
    expect(await eventually(async () => (await health(api.port)).status === 200, 15_000)).toBe(true);
    expect((await chat(api.port, 'POST', '/users', { id: 'late', name: 'L' })).status).toBe(201);
    expect((await chat(api.port, 'GET', '/users/late')).status).toBe(200);
  }, 60_000);

  it('a projector worker killed with -9 is replaced: a waiting worker takes its projections over and writes are served again', async () => {
    const dir = lab.dataDir();
    const env = processEnv(dir, { PROJECTION_LEASE_TTL_MS: '3000' });
    const first = await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', env);
    expect((await chat(api.port, 'POST', '/users', { id: 'before', name: 'B' })).status).toBe(201);
    // A second worker finds every lease held: it must stay up and keep trying, not exit 0.
    const second = await lab.startWorker(env);
    await sleep(500);
    expect(second.child.exitCode).toBeNull();

    await first.stop('SIGKILL');
    // Until the lease lapses nobody folds: a write is kept but says it is not visible yet, truthfully.
    const during = await chat(api.port, 'POST', '/users', { id: 'during', name: 'D' });
    expect([201, 503]).toContain(during.status);
    if (during.status === 503) expect(during.body.error).toMatch(/projection_lag/);
    expect(await eventually(async () => (await chat(api.port, 'GET', '/users/during')).status === 200, 15_000)).toBe(true);
    expect((await chat(api.port, 'POST', '/users', { id: 'after', name: 'A' })).status).toBe(201);
    expect((await chat(api.port, 'GET', '/users/after')).status).toBe(200);
    expect(await eventually(async () => (await health(api.port)).status === 200, 15_000)).toBe(true);
    expect(second.child.exitCode).toBeNull();
  }, 60_000);
});

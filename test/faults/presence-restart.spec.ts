import { openWsSubscription, WsSubscription } from '../support/subscribe-client';
import { chat, FaultLab, INSTANCE, processEnv, tokenFor } from './process-client';
import { freePort } from '../support/free-port';

/**
 * Restarts are invisible to presence watchers (issue 6): after a SIGTERM or a `kill -9`, the
 * watcher's client often resubscribes before the watched user's client registers again
 * (chatkit-client retries after 2 s, 4 s, then every 5 s, each client on its own schedule).
 * The restarted server must not answer that watch "offline" then "online" a moment later, and
 * must still report a user who really went away offline within its restart grace (6 s).
 */
const presence = (path: string) => `/services/chatkit_presence/v2/${INSTANCE}${path}`;
const as = (sub: string) => ({ Authorization: `Bearer ${tokenFor({ sub })}` });

describe('presence across a restart (real processes, real signals)', () => {
  const lab = new FaultLab();
  const open: WsSubscription[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
    await lab.stopAll();
  });
  afterAll(() => lab.cleanUp());

  /** A subscription over /ws, as chatkit-client makes it, closed after the test. */
  const subscribe = async (base: string, path: string, sub: string) => {
    const subscription = await openWsSubscription(base, presence(path), as(sub));
    open.push(subscription);
    expect(subscription.status).toBe(200);
    return subscription;
  };
  const stateOf = async (watch: WsSubscription, timeoutMs?: number) => {
    const event = await watch.nextEvent(timeoutMs);
    expect(event.body.event_name).toBe('presence_state');
    return event.body.data.state as string;
  };

  it('after a SIGTERM and a kill -9 restart, a watcher back before the user hears no "offline"; a user who went away is offline within the grace', async () => {
    const dir = lab.dataDir();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = processEnv(dir, { PORT: String(port) });
    let server = await lab.start('dist/src/main.js', env);
    for (const id of ['alice', 'bob', 'ann']) expect((await chat(port, 'POST', '/users', { id, name: id })).status).toBe(201);
    // Before: bob and ann are connected, alice watches bob.
    await subscribe(base, '/users/bob/register', 'bob');
    await subscribe(base, '/users/ann/register', 'ann');
    expect(await stateOf(await subscribe(base, '/users/bob', 'alice'), 10_000)).toBe('online');

    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      await server.stop(signal);
      await Promise.all(open.splice(0).map((s) => s.close()));
      server = await lab.start('dist/src/main.js', env);

      // Alice's client comes back first and watches bob and ann again.
      const bob = await subscribe(base, '/users/bob', 'alice');
      const ann = await subscribe(base, '/users/ann', 'alice');
      // Bob's client comes back two seconds later (its own retry schedule).
      expect(await bob.quietFor(2_000)).toBe(true);
      await subscribe(base, '/users/bob/register', 'bob');
      expect(await stateOf(bob)).toBe('online');

      if (signal === 'SIGTERM') {
        // Ann's comes back too, later still: alice never hears her offline either.
        await subscribe(base, '/users/ann/register', 'ann');
        expect(await stateOf(ann)).toBe('online');
      } else {
        // After the kill -9 ann never comes back. A generous bound around the 6 s grace: she really
        // went away, and the watcher is told so.
        expect(await stateOf(ann, 15_000)).toBe('offline');
      }
      expect(await bob.quietFor(300)).toBe(true); // no "offline" ever came for bob
    }
  }, 60_000);
});

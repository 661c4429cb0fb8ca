import { Answer, eventually, FaultLab, health, processEnv } from './process-client';

/**
 * An API process judges projections it does not fold by their leases: once the only projector
 * worker is gone and its leases have lapsed, /health says so (503, naming the projection) even
 * though no write arrives to show any lag; a new worker makes it healthy again.
 */
describe('health with no projector worker alive (real processes, kill -9)', () => {
  const lab = new FaultLab();
  afterEach(() => lab.stopAll());
  afterAll(() => lab.cleanUp());

  /** The projections /health reports unheld. */
  const unheldOf = (body: { projections: Record<string, { state: string }> }) =>
    Object.entries(body.projections)
      .filter(([, p]) => p.state === 'unheld')
      .map(([name]) => name);

  /**
   * The projections /health counts as problems when unheld: the serving versions (an older
   * version still listed beside a newer one, `role: retired`, serves nothing).
   */
  const servingOf = (body: { projections: Record<string, { role?: string }> }) =>
    Object.entries(body.projections)
      .filter(([, p]) => p.role === undefined)
      .map(([name]) => name);

  /** /health once it answers 503 with every projection unheld (failing the test past 15 s). */
  const everyProjectionUnheld = async (port: number): Promise<Answer> => {
    let answer = await health(port);
    const allUnheld = async () => {
      answer = await health(port);
      return answer.status === 503 && unheldOf(answer.body).length === Object.keys(answer.body.projections).length;
    };
    expect(await eventually(allUnheld, 15_000)).toBe(true);
    return answer;
  };

  /** One worker and one API process on a fresh data directory (leases of 1 s), the API healthy. */
  const workerAndHealthyApi = async () => {
    const env = processEnv(lab.dataDir(), { PROJECTION_LEASE_TTL_MS: '1000' });
    const worker = await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', env);
    expect(await eventually(async () => (await health(api.port)).status === 200, 10_000)).toBe(true);
    return { env, worker, api };
  };

  it('turns 503 naming the unheld projections after a worker is killed, and 200 once a new worker holds them', async () => {
    const { env, worker, api } = await workerAndHealthyApi();

    await worker.stop('SIGKILL');
    // No writes: lag cannot show it; the lapsed leases must (lease time plus grace, polled
    // generously). The worker renewed its leases one by one, so they lapse one by one: wait for all.
    let answer = await everyProjectionUnheld(api.port);
    const unheld = unheldOf(answer.body).filter((name) => servingOf(answer.body).includes(name));
    expect(unheld.length).toBeGreaterThan(0);
    for (const name of unheld) {
      expect(answer.body.problems).toContainEqual(expect.stringMatching(new RegExp(`^no projector worker holds ${name} \\(lease expired \\d+ s ago\\)$`)));
    }
    expect(answer.body.status).toBe('unavailable');

    await lab.startWorker(env);
    expect(await eventually(async () => (answer = await health(api.port)).status === 200, 10_000)).toBe(true);
    expect(Object.values(answer.body.projections as Record<string, { state: string }>).every((p) => p.state === 'running_elsewhere')).toBe(true);
  }, 60_000);

  it('a worker stopped cleanly releases its leases: after a lease time with none stored, 503 says no lease is stored', async () => {
    const { worker, api } = await workerAndHealthyApi();

    await worker.stop('SIGTERM');
    const answer = await everyProjectionUnheld(api.port);
    const names = Object.keys(answer.body.projections);
    for (const name of names) {
      expect(answer.body.projections[name].state).toBe('unheld');
      expect(answer.body.projections[name].lease_expired_seconds_ago).toBeUndefined();
      if (servingOf(answer.body).includes(name)) expect(answer.body.problems).toContain(`no projector worker holds ${name} (no lease is stored)`);
      else expect(answer.body.problems.join('\n')).not.toContain(name);
    }
  }, 60_000);
});

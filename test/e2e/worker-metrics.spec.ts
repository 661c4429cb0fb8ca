import jwt from 'jsonwebtoken';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, ServerProcess } from '../support/server-process';
import { freePort } from '../support/free-port';
import { eventually } from '../support/waiting';

const instance = 'wmetrics';
const secret = 'worker-metrics-secret';
const metricsToken = 'worker-scrape-token';
const su = () => jwt.sign({ instance, iss: 'api_keys/k', su: true }, secret, { algorithm: 'HS256', expiresIn: 600 });

/** One sample's value from Prometheus text, by its exact series (name and labels as printed). */
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('Metrics of a projector worker (METRICS_PORT) and which process wrote a log line', () => {
  let dir: string;
  let worker: ServerProcess;
  let api: ServerProcess;
  let metricsPort: number;
  const apiLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-wmetrics-'));
    metricsPort = await freePort();
    const env = { DATA_DIR: dir, INSTANCE_LOCATOR: `v1:local:${instance}`, INSTANCE_KEY: `k:${secret}`, METRICS_TOKEN: metricsToken };
    // Started together: a process start is most of this file's time (the API waits for the worker's folds).
    [worker, api] = await Promise.all([
      startProcess('dist/src/main.projector.js', { ...env, METRICS_PORT: String(metricsPort) }, /projector worker running/),
      startProcess('dist/src/main.api.js', env),
    ]);
    let partial = '';
    api.child.stdout!.on('data', (chunk) => {
      const text = partial + String(chunk);
      const lines = text.split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (line.startsWith('{')) apiLines.push(JSON.parse(line));
    });
  }, 40_000);
  afterAll(async () => {
    await Promise.all([worker?.stop('SIGKILL'), api?.stop('SIGKILL')]);
    rmSync(dir, { recursive: true, force: true });
  });

  const scrape = (init: RequestInit = {}, path = '/metrics') => fetch(`http://127.0.0.1:${metricsPort}${path}`, init);
  const authorized = { headers: { authorization: `Bearer ${metricsToken}` } };

  it('serves the worker’s projector batches, projection lag and process metrics to a scraper holding METRICS_TOKEN', async () => {
    for (let i = 0; i < 5; i++) {
      const created = await fetch(`http://127.0.0.1:${api.port}/services/chatkit/v6/${instance}/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${su()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: `w-${i}`, name: 'W' }),
      });
      expect(created.status).toBe(201); // acknowledged once the worker's projections hold it
    }
    const response = await scrape(authorized);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    // The worker folded the users (the API process folds nothing: these batches are the worker's).
    expect(sample(text, 'parley_projector_batch_events_sum')).toBeGreaterThanOrEqual(5);
    expect(sample(text, 'parley_projector_batch_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    // Every projection's lag, as the worker sees the log: caught up after the acknowledged writes.
    const lags = text.split('\n').filter((l) => l.startsWith('parley_projection_lag_events{'));
    expect(lags.length).toBeGreaterThan(0);
    expect(lags.some((l) => l.includes('role="serving"'))).toBe(true);
    for (const lag of lags) expect(Number(lag.split(' ').pop())).toBeGreaterThanOrEqual(0);
    // Process metrics of the worker itself.
    expect(sample(text, 'parley_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('parley_nodejs_eventloop_lag_seconds');
  });

  it('guards the worker’s /metrics with the same METRICS_TOKEN check as the API, in the JSON error format', async () => {
    const missing = await scrape();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    expect(await missing.json()).toEqual({ error: 'unauthorized/invalid_metrics_token', error_description: expect.any(String) });
    const wrong = await scrape({ headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain('parley_');

    const elsewhere = await scrape(authorized, '/health');
    expect(elsewhere.status).toBe(404);
    expect((await elsewhere.json()).error).toBe('not_found/route_not_found');
    const posted = await scrape({ ...authorized, method: 'POST', body: 'x' });
    expect(posted.status).toBe(405);
    expect((await posted.json()).error).toBe('bad_request/method_not_allowed');
  });

  it('marks every log line with the pid and hostname of the process that wrote it', async () => {
    const requestId = `pid-check-${Date.now()}`;
    const answered = await fetch(`http://127.0.0.1:${api.port}/health`, { headers: { 'x-request-id': requestId } });
    expect(answered.status).toBe(200);
    const line = await eventually(() => apiLines.find((l) => l.req_id === requestId), { timeoutMs: 5_000, everyMs: 50 });
    expect(line).toMatchObject({ pid: api.child.pid, hostname: hostname(), service: 'parley' });
    expect(api.child.pid).not.toBe(worker.child.pid);
  });
});

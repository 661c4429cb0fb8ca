/**
 * The server's CPU time per operation, for builds compared A/B on a shared machine, where
 * throughput swings with the other processes' load and CPU time per request hardly does:
 *   node dist/test/bench/cpu-per-op.js [main.js …]
 * Each main (default dist/src/main.js; e.g. a worktree of an older release's dist/src/main.js)
 * is started in turn on a fresh data directory, `CPU_ROUNDS` times interleaved (A B A B …). In
 * each, after a warm-up, a fixed number of create-user, send-message (v6, one room, one sender's
 * user token) and get-user requests are made (autocannon, `amount`), and the server process's
 * CPU time (every thread: utime + stime from /proc/<pid>/stat) over each is divided by the
 * requests (counted until the server settles: what it does after answering is included).
 * Every request must answer 2xx.
 *
 * Environment: CPU_OPS requests per measured scenario (default 6000), CPU_WARMUP (default
 * 2000), CPU_CONNECTIONS (default 20), CPU_ROUNDS (default 2), CPU_SCENARIOS (a subset of
 * create-user, send-message, send-message-keyed (with an Idempotency-Key), get-user,
 * send-message-webhooks (two webhooks of the instance carry every message: one to a live receiver,
 * one to a port nothing listens on; measured once the live one has every message, so a send's CPU
 * includes its delivery; last, and skipped by a server without webhooks); default all), CPU_PROF (a directory: the servers run with
 * --cpu-prof writing there, a file per thread, worker threads included: the projector thread's is
 * the largest after the main thread's; read with profile-summary.js), CPU_THREADS=1 (also print each
 * thread's share), CPU_BATCHES=1 (also print the projector batches each scenario wrote, from the
 * server's /metrics: how many, and events per batch).
 */
import autocannon from 'autocannon';
import { INSTANCE_ID, mintToken, parleyEnv, startWebhookReceiver } from './bench-server';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { freePort } from '../support/free-port';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';

const OPS = Number(process.env.CPU_OPS ?? 6000);
const WARMUP = Number(process.env.CPU_WARMUP ?? 2000);
const CONNECTIONS = Number(process.env.CPU_CONNECTIONS ?? 20);
const ROUNDS = Number(process.env.CPU_ROUNDS ?? 2);
const SCENARIOS = new Set((process.env.CPU_SCENARIOS ?? 'create-user,send-message,send-message-keyed,get-user,send-message-webhooks').split(','));
const THREADS = process.env.CPU_THREADS === '1';
const BATCHES = process.env.CPU_BATCHES === '1';
const METRICS_TOKEN = 'cpu-per-op-metrics';
const PROF_DIR = process.env.CPU_PROF ? resolve(process.env.CPU_PROF) : undefined;
const PROJECT_ROOT = resolve(__dirname, '..', '..', '..');
const MAINS = process.argv.length > 2 ? process.argv.slice(2).map((m) => resolve(m)) : [join(PROJECT_ROOT, 'dist/src/main.js')];

/** Users the reads cycle through. */
const READ_SET = 200;
const TICK_S = 1 / 100;

/** CPU seconds of a process, every thread, live and exited. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_S;
}

/** CPU seconds of each live thread of a process, by thread name and id. */
function threadSeconds(pid: number): Map<string, number> {
  const threads = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(`${name}#${tid}`, (Number(fields[11]) + Number(fields[12])) * TICK_S);
    } catch {
      // the thread ended
    }
  }
  return threads;
}

/** CPU seconds of a process's main thread (the event loop). */
function mainThreadSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_S;
}

/**
 * The process's CPU seconds once it has finished what the requests left it to do (projections,
 * key blocks, checkpoints): when two readings 300 ms apart differ by at most a tick. Profiled
 * (CPU_PROF), every thread's sampler ticks on while it idles: the event loop's time says then.
 */
async function settled(pid: number): Promise<number> {
  const busy = PROF_DIR ? () => mainThreadSeconds(pid) : () => cpuSeconds(pid);
  let last = busy();
  let total = cpuSeconds(pid);
  for (;;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = busy();
    if (now - last <= TICK_S) return total;
    last = now;
    total = cpuSeconds(pid);
  }
}


async function run(requests: number, base: string, spec: autocannon.RequestSpec): Promise<void> {
  const result = await autocannon({ url: base, connections: CONNECTIONS, amount: requests, timeout: 30, requests: [spec] });
  if (result.non2xx || result.errors || result.timeouts) throw new Error(`${spec.method} ${spec.path}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
}

type Figures = Record<string, number>;

/** Webhooks of the bench instance carrying every message, one to each port; false when the server has no webhooks (an older release). */
async function createWebhooks(base: string, headers: Record<string, string>, ports: readonly number[]): Promise<boolean> {
  for (const port of ports) {
    const response = await fetch(`${base}/services/parley_webhooks/v1/${INSTANCE_ID}/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: `http://127.0.0.1:${port}/hooks`, secret: 'bench-webhook-secret', event_types: ['v1.messages_created'] }),
    });
    if (response.status === 404) return false;
    if (response.status !== 201) throw new Error(`creating a webhook: ${response.status} ${await response.text()}`);
  }
  return true;
}

/** The projector batches written so far (every runner of the server), from its /metrics. */
async function projectorBatches(base: string): Promise<{ count: number; events: number }> {
  const text = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { count: value('parley_projector_batch_events_count'), events: value('parley_projector_batch_events_sum') };
}

async function measureOne(main: string, round: number): Promise<Figures> {
  const dataDir = mkdtempSync(join(os.tmpdir(), 'parley-cpu-per-op-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...(PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROF_DIR}`] : []), main], {
    cwd: resolve(dirname(main), '..', '..'),
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      ...parleyEnv(dataDir),
      ...(BATCHES ? { METRICS_TOKEN } : {}),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const cleanups: (() => void)[] = [];
  try {
    for (let deadline = Date.now() + 60_000; ; ) {
      const healthy = await fetch(`${base}/health`).then((r) => r.status === 200, () => false);
      if (healthy) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${main} did not become healthy`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const chat = `/services/chatkit/v6/${INSTANCE_ID}`;
    const su = { 'content-type': 'application/json', authorization: `Bearer ${mintToken({ su: true })}` };
    const setup = async (path: string, body: unknown) => {
      const response = await fetch(base + chat + path, { method: 'POST', headers: su, body: JSON.stringify(body) });
      if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    };
    await setup('/users', { id: 'sender', name: 'Sender' });
    await setup('/rooms', { id: 'room', name: 'room', user_ids: ['sender'] });
    for (let i = 0; i < READ_SET; i++) await setup('/users', { id: `reader-${i}`, name: `Reader ${i}` });
    let n = 0;
    const create: autocannon.RequestSpec = {
      method: 'POST',
      path: `${chat}/users`,
      headers: su,
      setupRequest: (request) => ({ ...request, body: JSON.stringify({ id: `u-${round}-${n}`, name: `Bench User ${n++}` }) }),
    };
    let m = 0;
    const send: autocannon.RequestSpec = {
      method: 'POST',
      path: `${chat}/rooms/room/messages`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${mintToken({ sub: 'sender' })}` },
      setupRequest: (request) => ({ ...request, body: JSON.stringify({ parts: [{ type: 'text/plain', content: `message ${m++}` }] }) }),
    };
    let k = 0;
    const keyedSend: autocannon.RequestSpec = {
      ...send,
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, 'idempotency-key': `bench-${round}-${k}` },
        body: JSON.stringify({ parts: [{ type: 'text/plain', content: `keyed message ${k++}` }] }),
      }),
    };
    let r = 0;
    const read: autocannon.RequestSpec = {
      method: 'GET',
      path: `${chat}/users/reader-0`,
      headers: { authorization: su.authorization },
      setupRequest: (request) => ({ ...request, path: `${chat}/users/reader-${r++ % READ_SET}` }),
    };
    let h = 0;
    const hookedSend: autocannon.RequestSpec = {
      ...send,
      setupRequest: (request) => ({ ...request, body: JSON.stringify({ parts: [{ type: 'text/plain', content: `hooked message ${h++}` }] }) }),
    };
    const figures: Figures = {};
    const scenarios = [['create-user', create], ['send-message', send], ['send-message-keyed', keyedSend], ['get-user', read], ['send-message-webhooks', hookedSend]] as const;
    for (const [name, spec] of scenarios) {
      if (!SCENARIOS.has(name)) continue;
      // Delivered: every hooked message the live receiver got (the CPU measured includes delivering them).
      let delivered: (() => Promise<void>) | null = null;
      if (name === 'send-message-webhooks') {
        const receiver = await startWebhookReceiver();
        cleanups.push(() => receiver.stop());
        if (!(await createWebhooks(base, su, [receiver.port, await freePort()]))) {
          process.stderr.write('  send-message-webhooks skipped: this server has no webhooks\n');
          continue;
        }
        delivered = async () => {
          for (let deadline = Date.now() + 120_000; (await receiver.received()) < h; ) {
            if (Date.now() > deadline) throw new Error(`the live webhook receiver got ${await receiver.received()} of ${h} messages in 2 minutes`);
            await new Promise((r) => setTimeout(r, 100));
          }
        };
      }
      await run(WARMUP, base, spec);
      await delivered?.();
      const before = await settled(child.pid!);
      const threadsBefore = THREADS ? threadSeconds(child.pid!) : null;
      const batchesBefore = BATCHES ? await projectorBatches(base) : null;
      const started = Date.now();
      await run(OPS, base, spec);
      await delivered?.();
      figures[name] = ((await settled(child.pid!) - before) / OPS) * 1e6;
      if (threadsBefore) {
        const per = [...threadSeconds(child.pid!)].map(([thread, s]) => [thread, ((s - (threadsBefore.get(thread) ?? 0)) / OPS) * 1e6] as const).filter(([, us]) => us >= 1);
        process.stderr.write(`  ${name} by thread: ${per.map(([thread, us]) => `${thread} ${us.toFixed(0)} µs`).join(', ')}\n`);
      }
      if (batchesBefore) {
        const after = await projectorBatches(base);
        const batches = after.count - batchesBefore.count;
        const events = after.events - batchesBefore.events;
        process.stderr.write(`  ${name} projector batches: ${batches} (${(batches / OPS).toFixed(2)} per request), ${(events / Math.max(1, batches)).toFixed(1)} events each\n`);
      }
      process.stderr.write(`  ${name}: ${OPS} requests and settling in ${Date.now() - started} ms\n`);
    }
    return figures;
  } finally {
    for (const cleanup of cleanups.splice(0)) cleanup();
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const all = new Map<string, Figures[]>(MAINS.map((m) => [m, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const main of MAINS) {
      const figures = await measureOne(main, round);
      all.get(main)!.push(figures);
      console.log(`cpu-per-op round ${round + 1} ${main}: ${Object.entries(figures).map(([k, v]) => `${k} ${v.toFixed(0)} µs`).join(', ')}`);
    }
  }
  for (const [main, runs] of all) {
    const names = Object.keys(runs[0]);
    const mean = (k: string) => runs.reduce((s, f) => s + f[k], 0) / runs.length;
    console.log(`cpu-per-op mean of ${runs.length} ${main}: ${names.map((k) => `${k} ${mean(k).toFixed(0)} µs`).join(', ')}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});

/**
 * `npm run bench`: Parley's write and read throughput against a plain Fastify + better-sqlite3
 * baseline with the same durability, measured with autocannon in one run.
 *
 * Both servers run as child processes (one at a time) so that autocannon, in this process,
 * does not share their event loop. On a 2-core machine client and server still share the
 * CPUs, as the numbers in /work/shared/notes/toolchain.md do.
 *
 * Environment:
 *   BENCH_DURATION     seconds per measured scenario (default 10)
 *   BENCH_CONNECTIONS  concurrent connections (default 50)
 *   BENCH_WARMUP       seconds of unmeasured warm-up before each scenario (default 2; 0 = none)
 *   BENCH_ONLY         comma-separated subset of: baseline, parley (default both)
 *   BENCH_SCENARIOS    comma-separated subset of: write, read, send, realtime, fanout, idle, scale, feeds, cores, rebuild, footprint, beams, partitions
 *                      (default all but beams and partitions)
 *                      footprint: bytes on disk per short message and RSS before any client, each against a
 *                      floor (a bare SQLite table; the bare Fastify baseline server) (footprint.ts)
 *                      cores: 50 senders each in their own room, then in one room, on this build, on
 *                      it with PROJECTOR_THREAD=false and on BENCH_CORES_BEFORE, interleaved (cores.ts);
 *                      BENCH_CORES_VARIANT="label:NAME=value,…" adds this build with that environment;
 *                      BENCH_CORES_BEFORE_LABEL names the older build (default "before sealing");
 *                      feeds: feed publishes (one feed, many feeds) and 1,000 HTTP SUBSCRIBE feed subscribers (Parley only);
 *                      send: durable send-message (Parley only, against the baseline insert), then the same
 *                      with an Idempotency-Key per request;
 *                      realtime: fanout and idle (Parley only);
 *                      fanout: one sender at 50 messages/s to a room of 1,000 WebSocket
 *                      subscribers: delivery and acknowledgement latency, server CPU per delivery;
 *                      idle: the memory of 10,000 idle subscriptions;
 *                      scale: a room of 1,000,000 messages in an instance of 1,000,000 users,
 *                      written through the event store port: the first start's fold rate, send
 *                      latency at start and end, 50 senders in that one room, restart-to-healthy,
 *                      the first send after the restart and resident memory (Parley only)
 *                      beams: (not in the default set) publishes to interests, rotated over many instances
 *                      (each is limited to 100/s), and to users; then the time from one publish to its
 *                      Web Push deliveries at 1,000 devices (a Parley of its own; Parley only)
 *                      partitions: (not in the default set) projector worker processes folding a log from
 *                      scratch on one SQLite data directory, 1 then 2 of them (test/bench/partitions.ts)
 *                      rebuild: a room of 1,000,000 messages rebuilt by npm run rebuild against an
 *                      incremental build (every row compared) and two floors (test/bench/rebuild.ts;
 *                      BENCH_REBUILD_BASELINE: another built worktree to rebuild with first;
 *                      BENCH_REBUILD_PARALLEL=1: this build's npm run rebuild -- --parallel too)
 *   BENCH_FOOTPRINT_MESSAGES  the footprint scenario's messages (default 20,000)
 *   BENCH_SCALE_MESSAGES, BENCH_SCALE_USERS  the scale scenario's sizes (default 1,000,000 each)
 *   BENCH_PARTITIONS_MESSAGES, BENCH_PARTITIONS_ROOMS, BENCH_PARTITIONS  the partitions scenario's log
 *                      (default 200,000 messages over 64 rooms) and PROJECTOR_PARTITIONS (default 4)
 *   BENCH_REBUILD_MESSAGES  the rebuild scenario's room (default 1,000,000)
 *   BENCH_TMPDIR       where the temporary data directories go (default os.tmpdir())
 *   BENCH_CPU_PROF     a directory: run the Parley child with --cpu-prof writing there
 *   BENCH_PARLEY_MAIN  the Parley entry point to start (default dist/src/main.js)
 *   BENCH_ENFORCE_GOAL 1: also exit non-zero when Parley's writes miss the goal
 *
 * Exits non-zero when any measured request was answered non-2xx, errored or timed out.
 */
import autocannon from 'autocannon';
import { INSTANCE_ID, KEY_ID, KEY_SECRET, mintToken, parleyEnv, startWebhookReceiver } from './bench-server';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { freePort } from '../support/free-port';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchFanOut, benchIdleMemory, benchWriteFloor, FanOutResult, IdleMemoryResult, RealtimeTarget, rssMb, WriteFloorResult } from './realtime';
import { benchFeedFanOut, FeedFanOutResult, feedFanOutLines, feedPublishSpec, FeedsTarget, publishOnce } from './feeds';
import { beamsChildEnv, benchWebPushDelivery, createBeamsInstances, interestsPublishSpec, publishOnce as beamsPublishOnce, usersPublishSpec, WebPushDeliveryResult, webPushDeliveryLines } from './beams';
import { benchPartitions, partitionsLines } from './partitions';
import { benchRebuild, RebuildResult, rebuildBuilds, rebuildLines } from './rebuild';
import { benchDiskFootprint, bytesPerMessage, DiskFootprint, diskFootprintLines, fileSizes, settledRssMib } from './footprint';
import { cpuSeconds, fillScale, Latencies, ScaleShape, SCALE_SEARCHES, senderId, sequentialSearches, sequentialSends, timedSend } from './scale';
import { join, resolve } from 'node:path';
import { CoresMeasure, coresLines, CoresServer, measureCores, setUpCores } from './cores';

const DURATION = positive('BENCH_DURATION', 10);
const CONNECTIONS = positive('BENCH_CONNECTIONS', 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const ONLY = new Set((process.env.BENCH_ONLY ?? 'baseline,parley').split(',').map((s) => s.trim()));
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'write,read,send,realtime,scale,feeds,cores,rebuild,footprint').split(',').map((s) => s.trim()));
const SCALE_MESSAGES = positive('BENCH_SCALE_MESSAGES', 1_000_000);
const SCALE_USERS = positive('BENCH_SCALE_USERS', 1_000_000);
const FOOTPRINT_MESSAGES = positive('BENCH_FOOTPRINT_MESSAGES', 20_000);
const TMP_ROOT = process.env.BENCH_TMPDIR || os.tmpdir();
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF ? resolve(process.env.BENCH_CPU_PROF) : undefined;
/** Parley must keep at least this share of the baseline's durable write throughput. */
const WRITE_GOAL = 0.6;
/** Fan-out delivery to 1,000 subscribers must stay under this at the 99th percentile. */
const FANOUT_P99_GOAL_MS = 25;
/** Server CPU per delivered fan-out event (everything the server does in the window, over the deliveries). */
const FANOUT_CPU_GOAL_US = 10;
/** The fan-out scenario: a room's members, the send rate, and how many sends are measured. */
const FANOUT = { subscribers: 1000, ratePerSecond: 50, messages: 100, warmupMessages: 50 };
/** The feeds fan-out: one feed's live subscribers, the publish rate, and how many publishes are measured. */
const FEED_FANOUT = { subscribers: 1000, ratePerSecond: 20, items: 50, warmupItems: 20 };
/** 10,000 idle subscriptions must fit in this much resident memory. */
const IDLE_RSS_GOAL_MB = 300;
/** The first send to the long room after a restart must answer within this. */
const FIRST_SEND_GOAL_MS = 50;
/** Events a start folds into the read models per second. */
const FOLD_RATE_GOAL = 100_000;
/** Sequential sends timed at the start and at the end of the scale scenario. */
const SCALE_SAMPLES = 200;
/** Message search p99 over the long room (issue 22). */
const SEARCH_P99_GOAL_MS = 50;
/** Users created before a read scenario; the reads cycle through them. */
const READ_SET = 200;

const PROJECT_ROOT = resolve(__dirname, '..', '..', '..');
const PARLEY_MAIN = resolve(PROJECT_ROOT, process.env.BENCH_PARLEY_MAIN ?? 'dist/src/main.js');
const BASELINE_MAIN = join(__dirname, 'baseline-server.js');


function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Child processes and temp dirs, always cleaned up: on success, on error and on signals.

interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly baseUrl: string;
  readonly output: string[];
  exited: boolean;
}

const children = new Set<Child>();
const tempDirs = new Set<string>();

function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(TMP_ROOT, prefix));
  tempDirs.add(dir);
  return dir;
}

function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Last-resort cleanup: synchronous, so it also runs from the 'exit' event. */
function cleanupNow(): void {
  for (const child of children) {
    if (!child.exited) {
      try {
        child.proc.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  children.clear();
  for (const dir of [...tempDirs]) {
    try {
      removeTempDir(dir);
    } catch {
      // best effort
    }
  }
}

process.on('exit', cleanupNow);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the benchmark`);
    cleanupNow();
    process.exit(130);
  });
}


async function startChild(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  healthTimeoutMs = 60_000,
): Promise<Child> {
  const port = await freePort();
  const proc = spawn(process.execPath, [...nodeArgs, script], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child: Child = { name, proc, baseUrl: `http://127.0.0.1:${port}`, output: [], exited: false };
  children.add(child);
  const keep = (chunk: Buffer): void => {
    for (const line of chunk.toString().split('\n')) {
      if (!line) continue;
      child.output.push(line);
      if (child.output.length > 50) child.output.shift();
      process.stderr.write(`  [${name}] ${line}\n`);
    }
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const exited = new Promise<never>((_, reject) =>
    proc.once('exit', (code, signal) => {
      child.exited = true;
      reject(new Error(`${name} exited during start-up (code ${code}, signal ${signal})\n${child.output.join('\n')}`));
    }),
  );
  exited.catch(() => undefined);
  await Promise.race([exited, waitForHealth(child, healthTimeoutMs)]);
  return child;
}

async function waitForHealth(child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exited) return; // the exit promise reports it
    try {
      const response = await fetch(`${child.baseUrl}/health`);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${child.name} was not healthy within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** SIGTERM (a graceful close, which also lets --cpu-prof write its profile), then SIGKILL. */
async function stopChild(child: Child, graceMs = 15_000): Promise<void> {
  if (!child.exited) {
    const gone = new Promise<void>((r) => {
      if (child.exited) r();
      else child.proc.once('exit', () => r());
    });
    child.proc.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (!child.exited) {
        console.error(`  [${child.name}] did not stop within ${graceMs} ms: SIGKILL`);
        child.proc.kill('SIGKILL');
      }
    }, graceMs);
    await gone;
    clearTimeout(timer);
  }
  children.delete(child);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Scenarios.

interface Target {
  readonly label: string;
  readonly pid: number;
  readonly baseUrl: string;
  readonly headers: Record<string, string>;
  readonly usersPath: string;
}

interface Row {
  readonly scenario: string;
  readonly kind: 'write' | 'read' | 'send' | 'send-again' | 'send-webhooks' | 'keyed-send' | 'scale-send' | 'feed-publish' | 'beams-publish';
  readonly server: 'baseline' | 'parley';
  readonly result: autocannon.Result;
  readonly cpu?: CpuShare;
}

/** CPU used during a scenario, in cores (1 = one core fully busy); Linux only. */
interface CpuShare {
  readonly server: number;
  readonly client: number;
  /** Everything else on the machine: other engineers' builds and tests make the numbers noisy. */
  readonly other: number;
}

interface CpuSample {
  readonly busy: number;
  readonly total: number;
  readonly server: number;
  readonly client: number;
  readonly at: bigint;
}

/** Jiffies of a process (utime + stime) from /proc/<pid>/stat. */
function processJiffies(pid: number | 'self'): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function cpuSample(serverPid: number | 'self'): CpuSample | undefined {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.reduce((a, b) => a + b, 0);
    // Interrupt time (loopback networking) is nobody's process time: leave it out of "busy".
    return {
      busy: total - cpu[3] - (cpu[4] ?? 0) - (cpu[5] ?? 0) - (cpu[6] ?? 0),
      total,
      server: processJiffies(serverPid),
      client: processJiffies('self'),
      at: process.hrtime.bigint(),
    };
  } catch {
    return undefined;
  }
}

function cpuShare(a: CpuSample | undefined, b: CpuSample | undefined): CpuShare | undefined {
  if (!a || !b || b.total === a.total) return undefined;
  const cores = os.cpus().length;
  // /proc/stat sums every CPU: (Δtotal / cores) jiffies elapsed per core.
  const perCore = (b.total - a.total) / cores;
  const server = (b.server - a.server) / perCore;
  const client = (b.client - a.client) / perCore;
  const busy = (b.busy - a.busy) / perCore;
  return { server, client, other: Math.max(0, busy - server - client) };
}

const rows: Row[] = [];
const failures: string[] = [];
let idCounter = 0;

/** A unique user id per request, for every scenario of this run. */
const nextUserId = (prefix: string): string => `${prefix}-${process.pid}-${(idCounter++).toString(36)}`;

function userBody(id: string): string {
  return JSON.stringify({ id, name: `Bench User ${id}` });
}

async function cannon(
  title: string,
  target: Target,
  spec: autocannon.RequestSpec,
  duration: number,
): Promise<autocannon.Result> {
  return autocannon({
    title,
    url: target.baseUrl,
    connections: CONNECTIONS,
    duration,
    timeout: 30,
    requests: [spec],
  });
}

async function measured(
  title: string,
  target: Target,
  spec: autocannon.RequestSpec,
): Promise<{ result: autocannon.Result; cpu?: CpuShare }> {
  const before = cpuSample(target.pid);
  const result = await cannon(title, target, spec, DURATION);
  const cpu = cpuShare(before, cpuSample(target.pid));
  return { result, cpu };
}

function checkResult(title: string, result: autocannon.Result): void {
  const problems: string[] = [];
  if (result.non2xx > 0) {
    const codes = Object.entries(result.statusCodeStats)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, s]) => `${code}×${s.count}`)
      .join(', ');
    problems.push(`${result.non2xx} non-2xx responses (${codes})`);
  }
  if (result.errors > 0) problems.push(`${result.errors} request errors`);
  if (result.timeouts > 0) problems.push(`${result.timeouts} timeouts`);
  if (result.mismatches > 0) problems.push(`${result.mismatches} body mismatches`);
  if (result['2xx'] === 0) problems.push('no successful responses at all');
  if (problems.length) failures.push(`${title}: ${problems.join('; ')}`);
}

/** A bodiless request sends no content-type; only the authorization header, if any. */
const readHeadersOf = (target: Target): Record<string, string> =>
  target.headers.authorization ? { authorization: target.headers.authorization } : {};

/** One request through fetch, checked, before autocannon hammers the route. */
async function sanity(
  target: Target,
  method: string,
  path: string,
  body: string | undefined,
  expectStatus: number,
  expectId: string,
): Promise<void> {
  const response = await fetch(target.baseUrl + path, {
    method,
    headers: body === undefined ? readHeadersOf(target) : target.headers,
    body,
  });
  const text = await response.text();
  let id: unknown;
  try {
    id = (JSON.parse(text) as { id?: unknown }).id;
  } catch {
    id = undefined;
  }
  if (response.status !== expectStatus || id !== expectId) {
    throw new Error(
      `${target.label} ${method} ${path}: expected ${expectStatus} with id ${expectId}, got ${response.status}: ${text.slice(0, 500)}`,
    );
  }
}

/** Warms up (unmeasured), then measures one scenario and records its row. */
async function scenario(
  title: string,
  target: Target,
  spec: autocannon.RequestSpec,
  kind: Row['kind'],
  server: Row['server'],
): Promise<void> {
  if (WARMUP > 0) {
    process.stderr.write(`  warm-up  ${title} (${WARMUP} s)\n`);
    checkResult(`${title} (warm-up)`, await cannon(`${title} warm-up`, target, spec, WARMUP));
  }
  process.stderr.write(`  measure  ${title} (${DURATION} s, ${CONNECTIONS} connections)\n`);
  const result = await measured(title, target, spec);
  checkResult(title, result.result);
  rows.push({ scenario: title, kind, server, ...result });
}

async function benchWrites(target: Target, server: Row['server']): Promise<void> {
  const prefix = `w-${server}`;
  const probe = nextUserId(prefix);
  await sanity(target, 'POST', target.usersPath, userBody(probe), 201, probe);
  const spec: autocannon.RequestSpec = {
    method: 'POST',
    path: target.usersPath,
    headers: target.headers,
    setupRequest: (request) => {
      request.body = userBody(nextUserId(prefix));
      return request;
    },
  };
  await scenario(`${target.label} create-user`, target, spec, 'write', server);
}

/** How a server takes sends, for the send scenarios: the request of one send, and its webhooks switched on and off. */
interface SendTarget {
  /** One durable send of `text` (a JSON body of v6 parts). */
  readonly spec: (text: () => string) => autocannon.RequestSpec;
  /** Every message from now on POSTed to each URL (`[]`: no more); false when the server has no webhooks. */
  readonly switchWebhooks: (urls: string[]) => Promise<boolean>;
}

/**
 * Durable sends, and the same sends with an Idempotency-Key each, and with two webhooks carrying
 * every message (one to a live receiver, one to a port nothing listens on: every delivery refused,
 * retried after a backoff). Each variant is run between plain sends, on the same server with the
 * same data behind it (a server with more data behind it is slower), and compared with their mean.
 * Issue 20: keyed and hooked writes "not slower than their own noise"; the baseline runs the same
 * variants as a floor (what the extra work costs a bare program on this machine, now).
 */
async function benchSendVariants(target: Target, server: Row['server'], sends: SendTarget): Promise<void> {
  let n = 0;
  const spec = sends.spec(() => `message ${n++}`);
  await scenario(`${target.label} send-message`, target, spec, 'send', server);
  // A UUID per logical write, as the client libraries make them: the key's look-up, its record in
  // the append and the stored answer.
  const keyed: autocannon.RequestSpec = {
    ...spec,
    setupRequest: (request, context) => {
      const built = spec.setupRequest!(request, context) ?? request;
      built.headers = { ...spec.headers, 'idempotency-key': randomUUID() };
      return built;
    },
  };
  await scenario(`${target.label} send-message with Idempotency-Key`, target, keyed, 'keyed-send', server);
  await scenario(`${target.label} send-message (again)`, target, spec, 'send-again', server);
  const receiver = await startWebhookReceiver();
  try {
    const dead = await freePort();
    if (!(await sends.switchWebhooks([`http://127.0.0.1:${receiver.port}/hooks`, `http://127.0.0.1:${dead}/hooks`]))) {
      process.stderr.write(`  skipped  ${target.label} sends with webhooks: this server has no webhooks\n`);
      return;
    }
    const sentBefore = n;
    await scenario(`${target.label} send-message, webhooks to a live and a dead receiver`, target, spec, 'send-webhooks', server);
    webhookDeliveries.set(server, { sent: n - sentBefore, received: await receiver.received() });
    await sends.switchWebhooks([]);
    await scenario(`${target.label} send-message (webhooks off again)`, target, spec, 'send-again', server);
  } finally {
    receiver.stop();
  }
}

/** Parley's v6 send to one room by one sender, and its webhooks through the webhooks API. */
async function parleySends(target: Target, senderToken: string): Promise<SendTarget> {
  const chat = target.usersPath.replace(/\/users$/, '');
  const setup = async (method: string, path: string, body: unknown) => {
    const response = await fetch(target.baseUrl + chat + path, { method, headers: target.headers, body: JSON.stringify(body) });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  };
  await setup('POST', '/users', { id: 'bench-sender', name: 'Sender' });
  await setup('POST', '/rooms', { id: 'bench-send', name: 'bench-send', user_ids: ['bench-sender'] });
  const webhookIds: string[] = [];
  return {
    spec: (text) => ({
      method: 'POST',
      path: `${chat}/rooms/bench-send/messages`,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${senderToken}` },
      setupRequest: (request) => {
        request.body = JSON.stringify({ parts: [{ type: 'text/plain', content: text() }] });
        return request;
      },
    }),
    switchWebhooks: async (urls) => {
      const hooks = `${target.baseUrl}/services/parley_webhooks/v1/${INSTANCE_ID}/webhooks`;
      if (urls.length === 0) {
        for (const id of webhookIds.splice(0)) {
          const response = await fetch(`${hooks}/${id}`, { method: 'PUT', headers: target.headers, body: JSON.stringify({ active: false }) });
          if (response.status !== 200) throw new Error(`switching a webhook off: ${response.status} ${await response.text()}`);
        }
        return true;
      }
      for (const url of urls) {
        const response = await fetch(hooks, {
          method: 'POST',
          headers: target.headers,
          body: JSON.stringify({ url, secret: 'bench-webhook-secret', event_types: ['v1.messages_created'] }),
        });
        // An older release (BENCH_PARLEY_MAIN) has no webhooks: nothing to compare.
        if (response.status === 404 && webhookIds.length === 0) return false;
        if (response.status !== 201) throw new Error(`creating a webhook: ${response.status} ${await response.text()}`);
        webhookIds.push(((await response.json()) as { id: string }).id);
      }
      return true;
    },
  };
}

/** The baseline's send: one INSERT (and the key's record) per request; its webhooks on a thread of its own. */
function baselineSends(target: Target): SendTarget {
  return {
    spec: (text) => ({
      method: 'POST',
      path: '/rooms/bench-send/messages',
      headers: { 'content-type': 'application/json' },
      setupRequest: (request) => {
        request.body = JSON.stringify({ parts: [{ type: 'text/plain', content: text() }] });
        return request;
      },
    }),
    switchWebhooks: async (urls) => {
      const response = await fetch(`${target.baseUrl}/webhooks`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ urls, secret: 'bench-webhook-secret' }),
      });
      if (response.status !== 204) throw new Error(`baseline webhooks: ${response.status} ${await response.text()}`);
      return true;
    },
  };
}
const webhookDeliveries = new Map<Row['server'], { sent: number; received: number }>();

let fanOut: FanOutResult | undefined;
let idleMemory: IdleMemoryResult | undefined;
let writeFloor: WriteFloorResult | undefined;

async function benchRealtime(target: Target, mint: RealtimeTarget['token']): Promise<void> {
  const realtime: RealtimeTarget = { baseUrl: target.baseUrl, pid: target.pid, instanceId: INSTANCE_ID, token: mint };
  if (SCENARIOS.has('realtime') || SCENARIOS.has('fanout')) {
    process.stderr.write(
      `  measure  parley fan-out: ${fmt(FANOUT.subscribers)} WebSocket subscribers, ${FANOUT.ratePerSecond} messages/s ` +
        `(${FANOUT.warmupMessages} warm-up, ${FANOUT.messages} measured)\n`,
    );
    fanOut = await benchFanOut(realtime, FANOUT);
    process.stderr.write(`  measure  write floor: a bare ws server writing frames of ${fanOut.frameBytes} bytes to ${fmt(FANOUT.subscribers)} sockets\n`);
    writeFloor = await benchWriteFloor(FANOUT.subscribers, { ...FANOUT, frameBytes: fanOut.frameBytes });
  }
  if (SCENARIOS.has('realtime') || SCENARIOS.has('idle')) {
    process.stderr.write('  measure  parley memory of 10,000 idle subscriptions (1,000 sockets)\n');
    idleMemory = await benchIdleMemory(realtime, 10_000, 10);
  }
}

let feedFanOut: FeedFanOutResult | undefined;

/** Feed publishes as pusher-feeds-server sends them (one feed; 1,000 feeds in turn), then the feed fan-out. */
async function benchFeeds(target: Target): Promise<void> {
  const feeds: FeedsTarget = { baseUrl: target.baseUrl, pid: target.pid, instanceId: INSTANCE_ID, keyId: KEY_ID, keySecret: KEY_SECRET };
  await publishOnce(feeds, 'bench-probe', 'probe');
  await scenario('parley feeds publish, one feed', target, feedPublishSpec(feeds, 1, 'one'), 'feed-publish', 'parley');
  await scenario('parley feeds publish, 1,000 feeds', target, feedPublishSpec(feeds, 1000, 'many'), 'feed-publish', 'parley');
  process.stderr.write(`  measure  parley feeds fan-out: ${fmt(FEED_FANOUT.subscribers)} HTTP SUBSCRIBE subscribers, ${FEED_FANOUT.ratePerSecond} items/s\n`);
  feedFanOut = await benchFeedFanOut(feeds, FEED_FANOUT);
}

async function benchReads(target: Target, server: Row['server']): Promise<void> {
  const ids: string[] = [];
  for (let i = 0; i < READ_SET; i++) {
    const id = nextUserId(`r-${server}`);
    await sanity(target, 'POST', target.usersPath, userBody(id), 201, id);
    ids.push(id);
  }
  await sanity(target, 'GET', `${target.usersPath}/${encodeURIComponent(ids[0])}`, undefined, 200, ids[0]);
  let next = 0;
  const spec: autocannon.RequestSpec = {
    method: 'GET',
    path: `${target.usersPath}/${encodeURIComponent(ids[0])}`,
    headers: readHeadersOf(target),
    setupRequest: (request) => {
      request.path = `${target.usersPath}/${encodeURIComponent(ids[next++ % ids.length])}`;
      return request;
    },
  };
  await scenario(`${target.label} get-user`, target, spec, 'read', server);
}

async function runBaseline(): Promise<void> {
  const dataDir = makeTempDir('parley-bench-baseline-');
  process.stderr.write(`starting the baseline server (Fastify + better-sqlite3, WAL, synchronous=FULL)\n`);
  const child = await startChild('baseline', BASELINE_MAIN, { DATA_DIR: dataDir });
  try {
    const target: Target = {
      label: 'baseline',
      pid: child.proc.pid!,
      baseUrl: child.baseUrl,
      headers: { 'content-type': 'application/json' },
      usersPath: '/users',
    };
    if (SCENARIOS.has('write')) await benchWrites(target, 'baseline');
    if (SCENARIOS.has('read')) await benchReads(target, 'baseline');
    if (SCENARIOS.has('send')) await benchSendVariants(target, 'baseline', baselineSends(target));
  } finally {
    await stopChild(child);
    removeTempDir(dataDir);
  }
}

async function runParley(): Promise<void> {
  const dataDir = makeTempDir('parley-bench-parley-');
  process.stderr.write(`starting Parley (${PARLEY_MAIN}, embedded SQLite in ${dataDir})\n`);
  const nodeArgs = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [];
  const child = await startChild('parley', PARLEY_MAIN, parleyEnv(dataDir), nodeArgs);
  try {
    const mint = mintToken;
    const token = mint({ su: true });
    const target: Target = {
      label: 'parley',
      pid: child.proc.pid!,
      baseUrl: child.baseUrl,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      usersPath: `/services/chatkit/v6/${INSTANCE_ID}/users`,
    };
    if (SCENARIOS.has('write')) await benchWrites(target, 'parley');
    if (SCENARIOS.has('read')) await benchReads(target, 'parley');
    if (SCENARIOS.has('send')) await benchSendVariants(target, 'parley', await parleySends(target, mint({ sub: 'bench-sender' })));
    if (['realtime', 'fanout', 'idle'].some((name) => SCENARIOS.has(name))) await benchRealtime(target, mint);
    if (SCENARIOS.has('feeds')) await benchFeeds(target);
  } finally {
    await stopChild(child);
    if (CPU_PROF_DIR) process.stderr.write(`CPU profile of the Parley child written to ${CPU_PROF_DIR}\n`);
    removeTempDir(dataDir);
  }
}

/** Instances the interests scenario rotates over: 100 publishes/s each, well above what one server takes. */
const BEAMS_INSTANCES = 40;
const BEAMS_DEVICES = 1000;
let webPushDelivery: WebPushDeliveryResult | undefined;

/** Beams on a Parley of its own: instances created before it starts, the local push service's host allowed. */
async function runBeams(): Promise<void> {
  const dataDir = makeTempDir('parley-bench-beams-');
  process.stderr.write(`  setup    ${BEAMS_INSTANCES} Beams instances with a key each\n`);
  const instanceIds = await createBeamsInstances(dataDir, BEAMS_INSTANCES, KEY_SECRET);
  process.stderr.write(`starting Parley for Beams (${PARLEY_MAIN}, embedded SQLite in ${dataDir})\n`);
  const child = await startChild('parley-beams', PARLEY_MAIN, { ...parleyEnv(dataDir), ...beamsChildEnv() });
  try {
    const beams = { baseUrl: child.baseUrl, instanceId: INSTANCE_ID, secret: KEY_SECRET };
    const target: Target = { label: 'parley', pid: child.proc.pid!, baseUrl: child.baseUrl, headers: {}, usersPath: '' };
    // Delivery first, while the delivery worker has no backlog of the throughput scenarios' publishes.
    process.stderr.write(`  measure  parley beams: one publish to ${fmt(BEAMS_DEVICES)} Web Push devices\n`);
    webPushDelivery = await benchWebPushDelivery(beams, child.proc.pid!, BEAMS_DEVICES, (line) => process.stderr.write(`${line}\n`));
    await beamsPublishOnce({ ...beams, instanceId: instanceIds[0] }, 'interests', { interests: ['probe'], web: { notification: { title: 'probe' } } });
    await scenario(`parley beams publish to interests (${BEAMS_INSTANCES} instances in turn)`, target, interestsPublishSpec(instanceIds, KEY_SECRET), 'beams-publish', 'parley');
    await scenario('parley beams publish to users (one instance, not limited)', target, usersPublishSpec(beams), 'beams-publish', 'parley');
  } finally {
    await stopChild(child);
    removeTempDir(dataDir);
  }
}

let coresRun: { measures: CoresMeasure[]; servers: CoresServer[]; load: number[] } | undefined;

/** The `cores` scenario: each server in turn on a fresh data directory, the rounds interleaved. */
async function runCores(): Promise<void> {
  const servers: CoresServer[] = [
    { label: 'parley', main: PARLEY_MAIN, env: {} },
    { label: 'parley, one core', main: PARLEY_MAIN, env: { PROJECTOR_THREAD: 'false' } },
  ];
  if (process.env.BENCH_CORES_BEFORE) {
    servers.push({ label: process.env.BENCH_CORES_BEFORE_LABEL || 'before sealing', main: resolve(PROJECT_ROOT, process.env.BENCH_CORES_BEFORE), env: {} });
  }
  // BENCH_CORES_VARIANT="label:NAME=value,NAME=value": this build once more with that environment (an A/B of a setting).
  const variant = /^([^:]+):(.*)$/.exec(process.env.BENCH_CORES_VARIANT ?? '');
  if (variant) servers.push({ label: variant[1], main: PARLEY_MAIN, env: Object.fromEntries(variant[2].split(',').map((kv) => kv.split('=') as [string, string])) });
  const rounds = positive('BENCH_CORES_ROUNDS', 2);
  const machineCpuSeconds = () => {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return (cpu[0] + cpu[1] + cpu[2]) / 100;
  };
  const options = {
    senders: CONNECTIONS,
    durationS: DURATION,
    warmupS: WARMUP,
    cpu: (pid: number) => ({ process: cpuSeconds(pid), machine: machineCpuSeconds() }),
  };
  const run = (coresRun = { measures: [] as CoresMeasure[], servers, load: os.loadavg() });
  for (let round = 0; round < rounds; round++) {
    for (const server of servers) {
      const dataDir = makeTempDir('parley-bench-cores-');
      process.stderr.write(`  measure  cores round ${round + 1}: ${server.label} (${server.main})\n`);
      const child = await startChild(`cores ${server.label}`, server.main, { ...parleyEnv(dataDir), ...server.env });
      try {
        const target = { baseUrl: child.baseUrl, pid: child.proc.pid! };
        await setUpCores(target, CONNECTIONS);
        for (const shape of ['own rooms', 'one room'] as const) run.measures.push(await measureCores(target, server.label, round, shape, options));
      } finally {
        await stopChild(child);
        removeTempDir(dataDir);
      }
    }
  }
}

interface ScaleResult {
  readonly shape: ScaleShape;
  readonly fill: { events: number; ms: number };
  /** From spawning the first process on the filled log to /health 200 (it folds the whole log). */
  readonly firstStartMs: number;
  /** CPU seconds the first process used until /health 200, and the restarted one. */
  readonly firstStartCpuS: number;
  readonly restartCpuS: number;
  readonly atStart: Latencies;
  readonly atEnd: Latencies;
  readonly rssEndMb: number;
  readonly restartMs: number;
  readonly rssHealthyMb: number;
  /** The data directory's bytes per message of the long room once restarted (users, keys and WAL files included). */
  readonly diskPerMessage: { all: number; withoutWal: number };
  /** The restarted process's first request: a send to a room without history (cold code, ids to reserve). */
  readonly firstRequestMs: number;
  /** Then the first send to the long room: its state is not cached yet. */
  readonly firstSendAfterRestartMs: number;
  readonly rssAfterFirstSendMb: number;
  /** Searches of the long room as one of its members, one at a time, newest first and best first. */
  readonly searches: { readonly recent: Latencies & { results: number }; readonly relevance: Latencies & { results: number } };
}

let scale: ScaleResult | undefined;


/** A room of a million messages in an instance of a million users: what costs grow with history? */
async function runScale(): Promise<void> {
  const shape: ScaleShape = {
    instanceId: INSTANCE_ID,
    roomId: 'long-room',
    emptyRoomId: 'empty-room',
    users: SCALE_USERS,
    messages: SCALE_MESSAGES,
    senders: CONNECTIONS,
  };
  const dataDir = makeTempDir('parley-bench-scale-');
  process.stderr.write(`  fill     ${fmt(shape.users)} users and a room of ${fmt(shape.messages)} messages through the event store port\n`);
  const fill = await fillScale(dataDir, shape, (line) => process.stderr.write(`${line}\n`));
  process.stderr.write(`starting Parley on the filled log (its first start folds ${fmt(fill.events)} events)\n`);
  let started = performance.now();
  let child = await startChild('parley-scale', PARLEY_MAIN, parleyEnv(dataDir), [], 60 * 60_000);
  const firstStartMs = performance.now() - started;
  const firstStartCpuS = cpuSeconds(child.proc.pid!);
  try {
    const messagesPath = `/services/chatkit/v6/${INSTANCE_ID}/rooms/${shape.roomId}/messages`;
    const emptyRoomPath = `/services/chatkit/v6/${INSTANCE_ID}/rooms/${shape.emptyRoomId}/messages`;
    const tokens = Array.from({ length: shape.senders }, (_, n) => mintToken({ sub: senderId(n) }));
    let sent = 0;
    const body = () => JSON.stringify({ parts: [{ type: 'text/plain', content: `scale message ${sent++}` }] });
    const send = (baseUrl: string, token = tokens[0], path = messagesPath) => () =>
      fetch(baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: body() });

    process.stderr.write(`  measure  parley scale: ${SCALE_SAMPLES} sequential sends to the long room\n`);
    const atStart = await sequentialSends(send(child.baseUrl), SCALE_SAMPLES);
    const target: Target = { label: 'parley', pid: child.proc.pid!, baseUrl: child.baseUrl, headers: {}, usersPath: '' };
    let turn = 0;
    const spec: autocannon.RequestSpec = {
      method: 'POST',
      path: messagesPath,
      setupRequest: (request) => {
        request.headers = { 'content-type': 'application/json', authorization: `Bearer ${tokens[turn++ % tokens.length]}` };
        request.body = body();
        return request;
      },
    };
    await scenario(`parley scale: ${shape.senders} senders, one room of ${fmt(shape.messages)}`, target, spec, 'scale-send', 'parley');
    process.stderr.write(`  measure  parley scale: ${SCALE_SAMPLES} sequential sends after the load\n`);
    const atEnd = await sequentialSends(send(child.baseUrl), SCALE_SAMPLES);
    const rssEndMb = rssMb(child.proc.pid!);
    process.stderr.write(`  measure  parley scale: ${SCALE_SAMPLES} searches of the long room, newest first, then ${SCALE_SAMPLES} best first\n`);
    const search = (order: string) => (q: string) =>
      fetch(`${child.baseUrl}/services/chatkit/v6/${INSTANCE_ID}/search/messages?${new URLSearchParams({ q, order, room_ids: shape.roomId })}`, {
        headers: { authorization: `Bearer ${tokens[0]}` },
      });
    const searches = {
      recent: await sequentialSearches(search('recent'), SCALE_SAMPLES),
      relevance: await sequentialSearches(search('relevance'), SCALE_SAMPLES),
    };

    await stopChild(child);
    process.stderr.write('  measure  parley scale: restart, then the first send to the long room\n');
    started = performance.now();
    child = await startChild('parley-scale', PARLEY_MAIN, parleyEnv(dataDir), [], 10 * 60_000);
    const restartMs = performance.now() - started;
    const restartCpuS = cpuSeconds(child.proc.pid!);
    const rssHealthyMb = rssMb(child.proc.pid!);
    const diskPerMessage = bytesPerMessage(shape.messages, fileSizes(dataDir));
    const firstRequestMs = await timedSend(send(child.baseUrl, tokens[1], emptyRoomPath));
    const firstSendAfterRestartMs = await timedSend(send(child.baseUrl, tokens[2]));
    const rssAfterFirstSendMb = rssMb(child.proc.pid!);
    scale = {
      shape,
      fill,
      firstStartMs,
      firstStartCpuS,
      restartCpuS,
      atStart,
      atEnd,
      rssEndMb,
      restartMs,
      rssHealthyMb,
      diskPerMessage,
      firstRequestMs,
      firstSendAfterRestartMs,
      rssAfterFirstSendMb,
      searches,
    };
  } finally {
    await stopChild(child);
    removeTempDir(dataDir);
  }
}

function reportScale(s: ScaleResult): void {
  const latencies = (l: Latencies) => `p50 ${l.p50Ms.toFixed(1)} ms, p99 ${l.p99Ms.toFixed(1)} ms, max ${l.maxMs.toFixed(1)} ms`;
  // The fold alone: the first start less what a start without anything to fold takes (the restart).
  const foldRate = s.fill.events / (Math.max(1, s.firstStartMs - s.restartMs) / 1000);
  console.log('');
  console.log(`scale: a room of ${fmt(s.shape.messages)} messages, an instance of ${fmt(s.shape.users)} users (${fmt(s.fill.events)} events, written in ${(s.fill.ms / 1000).toFixed(1)} s)`);
  console.log(
    `  first start on that log (folds all of it): healthy after ${(s.firstStartMs / 1000).toFixed(1)} s; ` +
      `less a plain restart's ${(s.restartMs / 1000).toFixed(1)} s, the fold ran at ${fmt(foldRate)} events/s`,
  );
  const foldCpuS = s.firstStartCpuS - s.restartCpuS;
  console.log(`  fold CPU: ${foldCpuS.toFixed(1)} s of the process = ${fmt(s.fill.events / foldCpuS)} events per CPU-second`);
  console.log(`  GOAL: rebuild >= ${fmt(FOLD_RATE_GOAL)} events/s — ${foldRate >= FOLD_RATE_GOAL ? 'MET' : 'NOT MET'}`);
  console.log(`  sends at start (${s.atStart.count}, one at a time): ${latencies(s.atStart)}`);
  console.log(`  sends at end   (${s.atEnd.count}, one at a time): ${latencies(s.atEnd)}`);
  const concurrent = rows.find((r) => r.kind === 'scale-send')?.result.requests.average;
  const baseWrite = rows.find((r) => r.kind === 'write' && r.server === 'baseline')?.result.requests.average;
  if (concurrent !== undefined) {
    const ratio = baseWrite ? concurrent / baseWrite : undefined;
    console.log(
      `  ${s.shape.senders} concurrent senders in the one room: ${fmt(concurrent)} messages/s` +
        (ratio === undefined ? ' (baseline insert not measured in this run)' : ` = ${(ratio * 100).toFixed(1)} % of the baseline insert`),
    );
    if (ratio !== undefined) console.log(`  GOAL: one busy room >= ${WRITE_GOAL * 100} % of the baseline insert — ${ratio >= WRITE_GOAL ? 'MET' : 'NOT MET'}`);
  }
  console.log(`  resident memory after the load: ${s.rssEndMb.toFixed(0)} MB`);
  console.log(`  restart (SIGTERM, start, /health 200): ${(s.restartMs / 1000).toFixed(2)} s; resident memory then ${s.rssHealthyMb.toFixed(0)} MB`);
  console.log(
    `  the restarted process's first request, a send to a room without history: ${s.firstRequestMs.toFixed(1)} ms ` +
      '(cold code paths and an id block to reserve: the same for any history)',
  );
  console.log(
    `  then the first send to the long room: ${s.firstSendAfterRestartMs.toFixed(1)} ms; resident memory after both ${s.rssAfterFirstSendMb.toFixed(0)} MB ` +
      `(${(s.rssAfterFirstSendMb - s.rssHealthyMb).toFixed(1)} MB more than when healthy)`,
  );
  console.log(
    `  data directory after the restart: ${s.diskPerMessage.all.toFixed(0)} B per message of the long room all-in ` +
      `(${s.diskPerMessage.withoutWal.toFixed(0)} without WAL files; its ${fmt(s.shape.users)} users and their keys included)`,
  );
  console.log(`  GOAL: all-in <= ${SCALE_DISK_GOAL_BYTES} B per message of the long room — ${s.diskPerMessage.all <= SCALE_DISK_GOAL_BYTES ? 'MET' : 'NOT MET'}`);
  console.log(`  GOAL: first send to the long room after a restart < ${FIRST_SEND_GOAL_MS} ms — ${s.firstSendAfterRestartMs < FIRST_SEND_GOAL_MS ? 'MET' : 'NOT MET'}`);
  const searched = (l: Latencies & { results: number }) => `${latencies(l)} (${fmt(l.results)} results in all)`;
  console.log(`  message search of the long room as a member, ${SCALE_SEARCHES.length} queries from its most common word to an absent one, one at a time:`);
  console.log(`    newest first (${s.searches.recent.count}): ${searched(s.searches.recent)}`);
  console.log(`    best first   (${s.searches.relevance.count}): ${searched(s.searches.relevance)}`);
  const worst = Math.max(s.searches.recent.p99Ms, s.searches.relevance.p99Ms);
  console.log(`  GOAL: search p99 < ${SEARCH_P99_GOAL_MS} ms over ${fmt(s.shape.messages)} messages — ${worst < SEARCH_P99_GOAL_MS ? 'MET' : 'NOT MET'}`);
}

/** Goals of issue 23 for the footprint: ejabberd's bytes per short message as measured beside Parley there, and RSS. */
const DISK_GOAL_BYTES = 472;
const IDLE_RSS_BEFORE_CLIENTS_GOAL_MIB = 100;
const SCALE_DISK_GOAL_BYTES = 700;

interface FootprintResult {
  readonly disk: DiskFootprint;
  readonly rssMib: number;
  readonly floorRssMib: number;
}

let footprint: FootprintResult | undefined;

/** Bytes on disk per short message and RSS before any client, each beside its floor (footprint.ts). */
async function runFootprint(): Promise<void> {
  const floorDir = makeTempDir('parley-bench-footprint-floor-');
  const floor = await startChild('baseline-footprint', BASELINE_MAIN, { DATA_DIR: floorDir });
  const floorRssMib = await settledRssMib(floor.proc.pid!);
  await stopChild(floor);
  removeTempDir(floorDir);

  const dataDir = makeTempDir('parley-bench-footprint-');
  const child = await startChild('parley-footprint', PARLEY_MAIN, parleyEnv(dataDir));
  try {
    process.stderr.write('  measure  parley footprint: RSS before any client\n');
    const rss = await settledRssMib(child.proc.pid!);
    process.stderr.write(`  measure  parley footprint: ${fmt(FOOTPRINT_MESSAGES)} short messages, then their bytes on disk\n`);
    const disk = await benchDiskFootprint(
      { baseUrl: child.baseUrl, pid: child.proc.pid!, dataDir, instanceId: INSTANCE_ID, token: mintToken },
      FOOTPRINT_MESSAGES,
    );
    footprint = { disk, rssMib: rss, floorRssMib };
  } finally {
    await stopChild(child);
    removeTempDir(dataDir);
  }
}

function reportFootprint(f: FootprintResult): void {
  console.log('');
  for (const line of diskFootprintLines(f.disk)) console.log(line);
  const { all, withoutWal } = bytesPerMessage(f.disk.messages, f.disk.after, f.disk.before);
  console.log(
    `GOAL: bytes on disk per short message <= ${DISK_GOAL_BYTES} (ejabberd's in issue 23's run) — ${withoutWal <= DISK_GOAL_BYTES ? 'MET' : 'NOT MET'} ` +
      `(${withoutWal.toFixed(0)} without WAL, ${all.toFixed(0)} with it)`,
  );
  console.log(
    `footprint in memory: server RSS before any client ${f.rssMib.toFixed(1)} MiB; floor: the bare Fastify + better-sqlite3 baseline server ` +
      `${f.floorRssMib.toFixed(1)} MiB (Parley = ${(f.rssMib / f.floorRssMib).toFixed(1)}× it)`,
  );
  console.log(`GOAL: RSS before any client <= ${IDLE_RSS_BEFORE_CLIENTS_GOAL_MIB} MiB — ${f.rssMib <= IDLE_RSS_BEFORE_CLIENTS_GOAL_MIB ? 'MET' : 'NOT MET'}`);
}

// ---------------------------------------------------------------------------------------------
// Report.

function machineInfo(): string[] {
  const cpus = os.cpus();
  let fs = 'unknown';
  try {
    const out = execFileSync('df', ['-T', TMP_ROOT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    fs = out.trim().split('\n').pop()!.split(/\s+/)[1] ?? fs;
  } catch {
    // df missing: leave unknown
  }
  const version = (pkg: string): string => {
    try {
      return (require(`${pkg}/package.json`) as { version: string }).version;
    } catch {
      return '?';
    }
  };
  return [
    `machine:  ${cpus.length} CPUs (${cpus[0]?.model?.trim() ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ` +
      `${os.platform()} ${os.release()}, load avg at start ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    `runtime:  node ${process.version}, fastify ${version('fastify')}, better-sqlite3 ${version('better-sqlite3')}, ` +
      `autocannon ${version('autocannon')}`,
    `settings: ${CONNECTIONS} connections, ${DURATION} s per scenario (+${WARMUP > 0 ? WARMUP : 0} s warm-up), ` +
      `data dirs under ${TMP_ROOT} (${fs}); client in this process, server in a child process`,
  ];
}

/** Share of all CPUs busy over `ms` (from /proc/stat, interrupts left out), or undefined off Linux. */
async function machineBusy(ms = 1000): Promise<number | undefined> {
  const a = cpuSample('self');
  await sleep(ms);
  const b = cpuSample('self');
  if (!a || !b || b.total === a.total) return undefined;
  return (b.busy - a.busy) / (b.total - a.total);
}

function table(header: string[], body: string[][], rightAlign: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAlign[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

const pctOf = (share: number) => `${Math.round(share * 100)} %`;
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function report(): boolean {
  const pct = (n: number | undefined) => (n === undefined ? '?' : `${Math.round(n * 100)} %`);
  const body = rows.map(({ scenario, result, cpu }) => [
    scenario,
    fmt(result.requests.average),
    fmt(result.latency.p50, 1),
    fmt(result.latency.p99, 1),
    fmt(result['2xx']),
    String(result.non2xx + result.errors + result.timeouts),
    pct(cpu?.server),
    pct(cpu?.client),
    pct(cpu?.other),
  ]);
  console.log('');
  for (const line of machineLines ?? machineInfo()) console.log(line);
  if (busyBefore !== undefined) {
    const pct = Math.round(busyBefore * 100);
    console.log(
      `idle check: other processes used ${pct} % of the CPUs just before the run` +
        (pct > 20 ? ' — WARNING: the machine was busy, numbers are low and noisy; re-run when it is idle' : ''),
    );
  }
  console.log('');
  console.log(
    table(
      ['scenario', 'req/s (mean)', 'p50 ms', 'p99 ms', '2xx total', 'non-2xx/errors', 'server CPU', 'client CPU', 'other CPU'],
      body,
      [false, true, true, true, true, true, true, true, true],
    ),
  );
  console.log('CPU columns: share of one core during the measured seconds (server = the child, client = autocannon,');
  console.log('other = every other process on the machine; above ~20 % the run competed with other work).');
  const noisy = rows.filter((r) => r.cpu && r.cpu.other > 0.2).map((r) => r.scenario);
  if (noisy.length) {
    console.log(`WARNING: other processes used CPU during ${noisy.join(', ')}: those numbers are low and noisy.`);
  }
  console.log('');
  const find = (kind: Row['kind'], server: Row['server']) =>
    rows.find((r) => r.kind === kind && r.server === server)?.result.requests.average;
  let goalMet: boolean | undefined;
  for (const kind of ['write', 'read'] as const) {
    const b = find(kind, 'baseline');
    const p = find(kind, 'parley');
    if (b && p) {
      const ratio = p / b;
      console.log(`ratio parley/baseline, ${kind}s: ${(ratio * 100).toFixed(1)} %`);
      if (kind === 'write') goalMet = writeGoalMet = ratio >= WRITE_GOAL;
    }
  }
  if (goalMet === undefined) {
    console.log(`GOAL: Parley writes >= ${WRITE_GOAL * 100} % of baseline — not evaluated (run both servers)`);
  } else {
    console.log(`GOAL: Parley writes >= ${WRITE_GOAL * 100} % of baseline — ${goalMet ? 'MET' : 'NOT MET'}`);
  }
  const send = find('send', 'parley');
  const baseWrite = find('write', 'baseline');
  if (send && baseWrite) {
    const ratio = send / baseWrite;
    console.log(`ratio parley send-message / baseline insert: ${(ratio * 100).toFixed(1)} %`);
    console.log(`GOAL: Parley durable send-message >= ${WRITE_GOAL * 100} % of baseline — ${ratio >= WRITE_GOAL ? 'MET' : 'NOT MET'}`);
  }
  // Each variant against the plain sends measured just before and just after it (their mean); the
  // baseline's ratios are the floor: what the same extra work costs a bare program here, now.
  const variantRatios = (server: Row['server']) => {
    const plain = rows.filter((r) => (r.kind === 'send' || r.kind === 'send-again') && r.server === server).map((r) => r.result.requests.average);
    const bracket = (i: number) => (plain[i] !== undefined && plain[i + 1] !== undefined ? (plain[i] + plain[i + 1]) / 2 : undefined);
    const ratio = (kind: Row['kind'], i: number) => {
      const variant = find(kind, server);
      const around = bracket(i);
      return variant && around ? { ratio: variant / around, before: plain[i], after: plain[i + 1] } : undefined;
    };
    return { keyed: ratio('keyed-send', 0), hooked: ratio('send-webhooks', 1) };
  };
  const parleyVariants = variantRatios('parley');
  const floorVariants = variantRatios('baseline');
  const variantLine = (what: string, own: { ratio: number; before: number; after: number } | undefined, floor: { ratio: number } | undefined, extra = '') => {
    if (!own) return;
    console.log(
      `ratio parley send-message ${what} / without: ${(own.ratio * 100).toFixed(1)} % ` +
        `(plain sends before and after it: ${fmt(own.before)}, ${fmt(own.after)} req/s)` +
        (floor ? `; floor (the baseline doing the same extra work, same run): ${(floor.ratio * 100).toFixed(1)} %` : '') +
        extra,
    );
  };
  variantLine('with Idempotency-Key', parleyVariants.keyed, floorVariants.keyed);
  const delivered = (server: Row['server']) => {
    const d = webhookDeliveries.get(server);
    return d ? `${fmt(d.received)} of ${fmt(d.sent)}` : undefined;
  };
  variantLine(
    'with webhooks (a live and a dead receiver)',
    parleyVariants.hooked,
    floorVariants.hooked,
    delivered('parley')
      ? `; the live receiver had ${delivered('parley')} messages when the scenario ended` + (delivered('baseline') ? ` (the baseline's: ${delivered('baseline')})` : '')
      : '',
  );
  if (fanOut) {
    const l = (x: FanOutResult['delivery']) => `p50 ${x.p50Ms.toFixed(1)} ms, p99 ${x.p99Ms.toFixed(1)} ms, max ${x.maxMs.toFixed(1)} ms`;
    console.log('');
    console.log(
      `fan-out: ${fmt(fanOut.subscribers)} WebSocket subscribers of one room, one sender at ${fanOut.ratePerSecond} messages/s, ` +
        `${fmt(fanOut.messages)} messages measured, ${fmt(fanOut.delivery.count)} deliveries (times from the send request leaving)`,
    );
    console.log(`  delivery to the members:   ${l(fanOut.delivery)}`);
    console.log(`  the sender's 201:          ${l(fanOut.ack)}`);
    console.log(
      `  server CPU: ${fmt(fanOut.serverCpuMs)} ms in ${fmt(fanOut.windowMs)} ms (${pctOf(fanOut.serverCpuMs / fanOut.windowMs)} of a core) = ` +
        `${fanOut.serverCpuPerDeliveryUs.toFixed(1)} µs per delivered event, sends and appends included; ` +
        `bench clients ${pctOf(fanOut.clientCpuMs / fanOut.windowMs)} of a core, their event-loop delay p99 ` +
        `${fanOut.clientLoopDelay.p99Ms.toFixed(1)} ms, max ${fanOut.clientLoopDelay.maxMs.toFixed(1)} ms`,
    );
    console.log(
      `    of which each send ${fanOut.sendCpuMs.toFixed(2)} ms (measured alone, before anyone subscribed) and each delivery ` +
        `${fanOut.deliveryCpuUs.toFixed(1)} µs` +
        (writeFloor
          ? `; floor on this machine now: ${writeFloor.cpuPerWriteUs.toFixed(1)} µs per frame for a bare ws server writing ` +
            `frames of the same size to as many sockets (loopback TCP: the kernel's work for both ends)`
          : ''),
    );
    console.log(`GOAL: fan-out p99 < ${FANOUT_P99_GOAL_MS} ms — ${fanOut.delivery.p99Ms < FANOUT_P99_GOAL_MS ? 'MET' : 'NOT MET'}`);
    console.log(
      `GOAL: server CPU per delivered event <= ${FANOUT_CPU_GOAL_US} µs — ${fanOut.serverCpuPerDeliveryUs <= FANOUT_CPU_GOAL_US ? 'MET' : 'NOT MET'}`,
    );
    console.log(`GOAL: sender's 201 p50 <= delivery p50 — ${fanOut.ack.p50Ms <= fanOut.delivery.p50Ms ? 'MET' : 'NOT MET'}`);
  }
  const baselineInsert = find('write', 'baseline');
  for (const row of rows.filter((r) => r.kind === 'feed-publish' || r.kind === 'beams-publish')) {
    console.log(
      `${row.scenario}: ${fmt(row.result.requests.average)} publishes/s` +
        (baselineInsert ? ` = ${((row.result.requests.average / baselineInsert) * 100).toFixed(1)} % of the baseline insert` : ' (baseline insert not measured in this run)'),
    );
  }
  if (webPushDelivery) {
    console.log('');
    for (const line of webPushDeliveryLines(webPushDelivery)) console.log(line);
  }
  if (feedFanOut) {
    console.log('');
    for (const line of feedFanOutLines(feedFanOut)) console.log(line);
  }
  if (scale) reportScale(scale);
  if (coresRun) for (const line of coresLines(coresRun.measures, coresRun.servers, CONNECTIONS, coresRun.load)) console.log(line);
  if (partitionLines) for (const line of ['', ...partitionLines]) console.log(line);
  if (rebuilt) {
    console.log('');
    for (const line of rebuildLines(rebuilt)) console.log(line);
  }
  if (footprint) reportFootprint(footprint);
  if (idleMemory) {
    console.log(
      `idle subscriptions: ${fmt(idleMemory.subscriptions)} on ${fmt(idleMemory.sockets)} sockets: server RSS ` +
        `${idleMemory.rssBeforeMb.toFixed(0)} MB before, ${idleMemory.rssAfterMb.toFixed(0)} MB after`,
    );
    console.log(`GOAL: resident memory with 10,000 idle subscriptions < ${IDLE_RSS_GOAL_MB} MB — ${idleMemory.rssAfterMb < IDLE_RSS_GOAL_MB ? 'MET' : 'NOT MET'}`);
  }
  if (failures.length) {
    console.log('');
    console.log('FAILED: every request must be answered 2xx, without errors or timeouts:');
    for (const f of failures) console.log(`  - ${f}`);
    return false;
  }
  return true;
}

let partitionLines: string[] | undefined;

async function runPartitions(): Promise<void> {
  const shape = {
    messages: Number(process.env.BENCH_PARTITIONS_MESSAGES ?? 200_000),
    rooms: Number(process.env.BENCH_PARTITIONS_ROOMS ?? 64),
    partitions: Number(process.env.BENCH_PARTITIONS ?? 4),
  };
  partitionLines = partitionsLines(shape, await benchPartitions(shape, (line) => process.stderr.write(`${line}\n`)));
}

let rebuilt: RebuildResult | undefined;
let busyBefore: number | undefined;
let machineLines: string[] | undefined;

async function main(): Promise<void> {
  machineLines = machineInfo();
  busyBefore = await machineBusy();
  if (ONLY.has('baseline')) await runBaseline();
  if (ONLY.has('parley') && ['write', 'read', 'send', 'realtime', 'fanout', 'idle', 'feeds'].some((name) => SCENARIOS.has(name))) await runParley();
  if (ONLY.has('parley') && SCENARIOS.has('beams')) await runBeams();
  if (ONLY.has('parley') && SCENARIOS.has('scale')) await runScale();
  if (ONLY.has('parley') && SCENARIOS.has('cores')) await runCores();
  if (ONLY.has('parley') && SCENARIOS.has('partitions')) await runPartitions();
  if (ONLY.has('parley') && SCENARIOS.has('rebuild')) {
    const messages = Number(process.env.BENCH_REBUILD_MESSAGES ?? 1_000_000);
    rebuilt = await benchRebuild({ tmpRoot: TMP_ROOT, messages, builds: rebuildBuilds(process.env), progress: (line) => process.stderr.write(`${line}\n`) });
  }
  if (SCENARIOS.has('footprint')) await runFootprint();
  const ok = report();
  process.exitCode = ok ? 0 : 1;
}

/** Whether the last report found the write goal met (undefined when not evaluated). */
let writeGoalMet: boolean | undefined;

function finish(): void {
  if (process.env.BENCH_ENFORCE_GOAL === '1' && writeGoalMet === false) process.exitCode = 1;
}

main().then(finish, (error) => {
  if (rows.length) report();
  console.error(`\nBENCHMARK FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  cleanupNow();
  process.exit(1);
});

/**
 * The `cores` scenario (issue 23, goal 1: both cores in the embedded default): durable sends from
 * 50 senders, each in a room of their own, then the same 50 senders in one busy room, on several
 * servers started in turn and interleaved (A B C A B C …), so that their ratios come from one run:
 *   - `parley`: the build under test as it is configured by default (the projector thread on);
 *   - `parley, one core`: the same build with `PROJECTOR_THREAD=false` (everything on the event loop);
 *   - `before sealing`: the release before crypto-shredding, `BENCH_CORES_BEFORE` (a built
 *     worktree's dist/src/main.js, e.g. of 5784d5c), when given.
 * Each server gets a fresh data directory. Throughput (messages/s), latency (p50/p99) and the
 * server's CPU (cores busy during the measured seconds) are printed per server and round, and the
 * goal: the default build at least 1.8 times the one-core rate, its p50 latency no worse.
 *
 * Environment (beside run.ts's BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS):
 *   BENCH_CORES_ROUNDS  interleaved rounds (default 2)
 *   BENCH_CORES_BEFORE  main.js of an older build to include (default: none)
 */
import autocannon from 'autocannon';
import os from 'node:os';
import { INSTANCE_ID, mintToken } from './bench-server';

/** The default build must reach this multiple of the one-core rate (issue 23, goal 1). */
export const CORES_GOAL = 1.8;

export interface CoresServer {
  /** How the report names it. */
  readonly label: string;
  readonly main: string;
  /** Environment on top of the bench's Parley environment. */
  readonly env: Record<string, string>;
}

export interface CoresTarget {
  readonly baseUrl: string;
  readonly pid: number;
}

export interface CoresMeasure {
  readonly server: string;
  readonly round: number;
  readonly shape: 'own rooms' | 'one room';
  readonly result: autocannon.Result;
  /** Cores the server used over the measured seconds (1 = one core fully busy). */
  readonly serverCores: number;
  /** Cores every other process used (the load generator included). */
  readonly otherCores: number;
  /** Cores the load generator (this process) used over the measured seconds. */
  readonly clientCores: number;
}

export interface CoresOptions {
  readonly senders: number;
  readonly durationS: number;
  readonly warmupS: number;
  /** Samples a process's CPU seconds and the machine's (from /proc). */
  readonly cpu: (pid: number) => { process: number; machine: number };
}

const senderOf = (n: number) => `cores-sender-${n}`;
const ownRoomOf = (n: number) => `cores-room-${n}`;
const BUSY_ROOM = 'cores-busy-room';

/** The senders, a room of each one's own, and one room of all of them. */
export async function setUpCores(target: CoresTarget, senders: number): Promise<void> {
  const chat = `${target.baseUrl}/services/chatkit/v6/${INSTANCE_ID}`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${mintToken({ su: true })}` };
  const post = async (path: string, body: unknown) => {
    const response = await fetch(chat + path, { method: 'POST', headers, body: JSON.stringify(body) });
    if (response.status >= 300) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
  };
  for (let n = 0; n < senders; n++) await post('/users', { id: senderOf(n), name: `Sender ${n}` });
  for (let n = 0; n < senders; n++) await post('/rooms', { id: ownRoomOf(n), name: ownRoomOf(n), user_ids: [senderOf(n)] });
  await post('/rooms', { id: BUSY_ROOM, name: BUSY_ROOM, user_ids: Array.from({ length: senders }, (_, n) => senderOf(n)) });
}

/**
 * Each connection is one sender (its own token) sending to its own room (`own rooms`) or to the
 * busy room (`one room`), one request at a time, as a client waiting for each 201.
 *
 * autocannon resets a connection's `context` after each pass over its requests (here every
 * request), but deep-clones the spec per connection and hands `setupRequest` a shallow copy of
 * it: an object-valued field of the spec is the connection's own and lasts.
 */
function sendSpec(shape: CoresMeasure['shape'], senders: number): autocannon.RequestSpec {
  const tokens = Array.from({ length: senders }, (_, n) => mintToken({ sub: senderOf(n) }));
  let nextSender = 0;
  let sent = 0;
  type Spec = autocannon.RequestSpec & { connection: { sender?: number } };
  const spec: Spec = {
    method: 'POST',
    path: '/',
    connection: {},
    setupRequest: (request) => {
      const connection = (request as Spec).connection;
      connection.sender ??= nextSender++ % senders;
      const n = connection.sender;
      const room = shape === 'own rooms' ? ownRoomOf(n) : BUSY_ROOM;
      return {
        ...request,
        path: `/services/chatkit/v6/${INSTANCE_ID}/rooms/${room}/messages`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[n]}` },
        body: JSON.stringify({ parts: [{ type: 'text/plain', content: `cores message ${sent++}` }] }),
      };
    },
  };
  return spec;
}

/** Warm-up (unmeasured), then the measured seconds; every request must answer 2xx. */
export async function measureCores(
  target: CoresTarget,
  server: string,
  round: number,
  shape: CoresMeasure['shape'],
  options: CoresOptions,
): Promise<CoresMeasure> {
  const spec = sendSpec(shape, options.senders);
  const run = (duration: number) =>
    autocannon({ url: target.baseUrl, connections: options.senders, duration, timeout: 30, requests: [spec] }) as unknown as Promise<autocannon.Result>;
  const check = (result: autocannon.Result) => {
    if (result.non2xx || result.errors || result.timeouts || !result['2xx']) {
      throw new Error(`${server}, ${shape}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts, ${result['2xx']} 2xx`);
    }
  };
  if (options.warmupS > 0) check(await run(options.warmupS));
  const before = options.cpu(target.pid);
  const clientBefore = process.cpuUsage();
  const result = await run(options.durationS);
  const client = process.cpuUsage(clientBefore);
  const after = options.cpu(target.pid);
  check(result);
  const seconds = result.duration || options.durationS;
  const serverCores = (after.process - before.process) / seconds;
  const otherCores = Math.max(0, (after.machine - before.machine) / seconds - serverCores);
  const clientCores = (client.user + client.system) / 1e6 / seconds;
  return { server, round, shape, result, serverCores, otherCores, clientCores };
}

/** The server's CPU (every thread) over the measured seconds, per send answered in them. */
const cpuPerSendUs = (m: CoresMeasure) => ((m.serverCores * (m.result.duration || 1)) / Math.max(1, m.result['2xx'])) * 1e6;

/** The load generator's CPU over the measured seconds, per send answered in them. */
const clientCpuPerSendUs = (m: CoresMeasure) => ((m.clientCores * (m.result.duration || 1)) / Math.max(1, m.result['2xx'])) * 1e6;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The report: every measurement, the means per server, the ratios and the goal. */
export function coresLines(measures: readonly CoresMeasure[], servers: readonly CoresServer[], senders: number, loadAtStart: readonly number[]): string[] {
  const lines = [
    '',
    `cores: durable sends from ${senders} senders in their own rooms, then in one room, servers interleaved; ` +
      `load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}`,
  ];
  for (const m of measures) {
    lines.push(
      `  round ${m.round + 1} ${m.server.padEnd(16)} ${m.shape.padEnd(9)} ${fmt(m.result.requests.average).padStart(6)} msg/s, ` +
        `p50 ${fmt(m.result.latency.p50, 1)} ms, p99 ${fmt(m.result.latency.p99, 1)} ms; server ${fmt(m.serverCores, 2)} cores ` +
        `(${fmt(cpuPerSendUs(m))} µs of CPU per send), load generator ${fmt(m.clientCores, 2)} cores (${fmt(clientCpuPerSendUs(m))} µs per send), ` +
        `everything else ${fmt(m.otherCores, 2)} cores`,
    );
  }
  const mean = (server: string, shape: CoresMeasure['shape'], of: (m: CoresMeasure) => number) => {
    const own = measures.filter((m) => m.server === server && m.shape === shape);
    return own.length ? own.reduce((s, m) => s + of(m), 0) / own.length : undefined;
  };
  const [main, oneCore] = servers;
  for (const shape of ['own rooms', 'one room'] as const) {
    lines.push(`  ${shape}, mean of the rounds:`);
    const rate = (s: CoresServer) => mean(s.label, shape, (m) => m.result.requests.average);
    for (const s of servers) {
      const r = rate(s);
      if (r === undefined) continue;
      const ratios = servers
        .filter((o) => o !== s && rate(o))
        .map((o) => `${(r / rate(o)!).toFixed(2)}× ${o.label}`)
        .join(', ');
      lines.push(
        `    ${s.label.padEnd(16)} ${fmt(r).padStart(6)} msg/s, p50 ${fmt(mean(s.label, shape, (m) => m.result.latency.p50)!, 1)} ms, ` +
          `p99 ${fmt(mean(s.label, shape, (m) => m.result.latency.p99)!, 1)} ms, server ${fmt(mean(s.label, shape, (m) => m.serverCores)!, 2)} cores, ` +
          `${fmt(mean(s.label, shape, cpuPerSendUs)!)} µs CPU per send` +
          (ratios ? ` (${ratios})` : ''),
      );
    }
    if (shape === 'own rooms' && main && oneCore && rate(main) && rate(oneCore)) {
      const ratio = rate(main)! / rate(oneCore)!;
      const p50 = mean(main.label, shape, (m) => m.result.latency.p50)!;
      const p50OneCore = mean(oneCore.label, shape, (m) => m.result.latency.p50)!;
      lines.push(
        `  GOAL: sends from ${senders} senders in their own rooms >= ${CORES_GOAL}× the one-core rate, p50 no worse — ` +
          `${ratio.toFixed(2)}×, p50 ${fmt(p50, 1)} against ${fmt(p50OneCore, 1)} ms: ${ratio >= CORES_GOAL && p50 <= p50OneCore ? 'MET' : 'NOT MET'}`,
      );
      // The floor of the same run: client and server share this machine's cores, so no build can
      // answer more sends a second than the cores divided by what one send costs the two of them
      // (the cheapest server measured: the one-core build spends the least CPU per send).
      const cores = os.cpus().length;
      const serverUs = Math.min(...[main, oneCore].map((s) => mean(s.label, shape, cpuPerSendUs)!));
      const clientUs = mean(oneCore.label, shape, clientCpuPerSendUs)!;
      const ceiling = (cores * 1e6) / (serverUs + clientUs);
      lines.push(
        `  floor of this run: ${cores} cores / (server ${fmt(serverUs)} µs + load generator ${fmt(clientUs)} µs of CPU per send) = ` +
          `at most ${fmt(ceiling)} msg/s on this machine, ${(ceiling / rate(oneCore)!).toFixed(2)}× the one-core rate` +
          (ceiling / rate(oneCore)! < CORES_GOAL ? `: the goal is out of reach here (it needs a machine where the load generator does not share the cores)` : ''),
      );
    }
  }
  return lines;
}

/**
 * Real-time measurements for `npm run bench`, against a running Parley: how fast messages
 * sent at a steady rate reach many live subscribers, how fast their senders get their
 * answers, what each delivery costs the server in CPU, and how much memory idle
 * subscriptions cost. Clients speak the @pusher/platform WebSocket bridge on /ws, as
 * chatkit-client does, through `BenchSocket`, a minimal client that keeps their own cost
 * (and their lag, which would be timed as delivery latency) low.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fork } from 'node:child_process';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createHash, randomBytes } from 'node:crypto';
import { connect, Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { WebSocket, WebSocketServer } from 'ws';

export interface Latencies {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface FanOutResult {
  readonly subscribers: number;
  readonly messages: number;
  readonly ratePerSecond: number;
  /** From the send request leaving to a subscriber reading the event (durable append included). */
  readonly delivery: Latencies;
  /** From the send request leaving to the sender reading its 201. */
  readonly ack: Latencies;
  /** The server's CPU time (every thread) from the first measured send to the last delivery. */
  readonly serverCpuMs: number;
  /** That CPU time over the deliveries: everything the server did, sends and appends included. */
  readonly serverCpuPerDeliveryUs: number;
  /** Server CPU time per send at the same rate while the room had no subscriber. */
  readonly sendCpuMs: number;
  /** The deliveries' own share: the window's CPU time less that of the sends, over the deliveries. */
  readonly deliveryCpuUs: number;
  /** Bytes of one delivered event frame (payload), for the write floor's frames. */
  readonly frameBytes: number;
  /** Wall time of that window, to read the CPU time as a share of a core. */
  readonly windowMs: number;
  /** This process's CPU time in that window: near a core means the clients, not the server, set the pace. */
  readonly clientCpuMs: number;
  /** This process's event-loop delay in that window (p99 and max, ms): how late the clients read what had arrived. */
  readonly clientLoopDelay: { readonly p99Ms: number; readonly maxMs: number };
  /** The kernel's share of the server's CPU time in that window (/proc/<pid>/stat stime over utime + stime). */
  readonly serverKernelShare: number;
  /** The server's write syscalls in that window over the deliveries: below 1 when frames for a socket went out together. */
  readonly writesPerDelivery: number;
  /** The server's CPU time per second with nothing to do (timers, pollers): part of what a send measured alone costs. */
  readonly idleCpuMsPerSecond: number;
}

export interface IdleMemoryResult {
  readonly subscriptions: number;
  readonly sockets: number;
  readonly rssBeforeMb: number;
  readonly rssAfterMb: number;
}

export interface RealtimeTarget {
  readonly baseUrl: string;
  readonly pid: number;
  readonly instanceId: string;
  /** Mints an access token (su, or acting as `sub`). */
  token(claims: { sub?: string; su?: boolean }): string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A monotonic clock shared by every thread of the process (the sender runs in a worker). */
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** Resident memory of a process, in MiB (Linux /proc). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/**
 * CPU time of every thread of a process, in ms, from the scheduler's nanosecond counters
 * (Linux /proc/<pid>/task/<tid>/schedstat): /proc/<pid>/stat counts in 10 ms ticks, too
 * coarse for a few seconds of fan-out.
 */
export function processCpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns / 1e6;
}

/**
 * A process's CPU time in user and kernel mode, in ms, from /proc/<pid>/stat (utime and stime,
 * in clock ticks of 1/100 s on Linux): coarse, so read over windows of seconds.
 */
export function processCpuSplitMs(pid: number): { userMs: number; kernelMs: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { userMs: Number(fields[11]) * 10, kernelMs: Number(fields[12]) * 10 };
}

/** Write-like syscalls a process made so far (/proc/<pid>/io syscw): one per socket write or writev. */
export function writeSyscalls(pid: number): number {
  return Number(/syscw:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
}

async function call(target: RealtimeTarget, method: string, path: string, body: unknown, token = target.token({ su: true })) {
  const response = await fetch(`${target.baseUrl}/services/chatkit/v6/${target.instanceId}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<any>;
}

/**
 * The bench's WebSocket client: a real RFC 6455 client on a plain TCP socket — an HTTP
 * upgrade with its key checked against the server's accept, masked frames out, every frame
 * in parsed — without ws's per-message machinery (events, fragments buffers, UTF-8 checks).
 * A thousand ws clients in one Node process used about a core at 50 frames/s each, and their
 * own lag was timed as delivery latency; the SDKs are still what the e2e tests speak. A text
 * frame's payload is handed over in the shared read buffer: read it there, do not keep it.
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

export class BenchSocket {
  private readonly socket: Socket;
  private pending: Buffer | null = null;
  private upgraded = false;
  closed = false;

  private constructor(
    socket: Socket,
    private readonly onText: (payload: Buffer) => void,
    private readonly onUpgrade: (responseHead: string) => void,
  ) {
    this.socket = socket;
  }

  static open(url: string, onText: (payload: Buffer) => void): Promise<BenchSocket> {
    const { hostname, port, pathname } = new URL(url);
    const key = randomBytes(16).toString('base64');
    const expectedAccept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    return new Promise((resolve, reject) => {
      let client: BenchSocket;
      // Reads land in one buffer shared by every client (each is parsed before the next read):
      // no Buffer and no 'data' event per read, the bulk of a Node client's cost per frame.
      const socket = connect({
        host: hostname,
        port: Number(port),
        noDelay: true,
        onread: { buffer: READ_BUFFER, callback: (length, buffer) => client.received((buffer as Buffer).subarray(0, length)) },
      });
      client = new BenchSocket(socket, onText, (head) => {
        const accept = /\r\nsec-websocket-accept:\s*(\S+)/i.exec(head)?.[1];
        if (head.startsWith('HTTP/1.1 101') && accept === expectedAccept) return resolve(client);
        socket.destroy();
        reject(new Error(`WebSocket upgrade refused: ${head.split('\r\n')[0]}`));
      });
      socket.once('error', reject);
      socket.once('close', () => (client.closed = true));
      socket.write(
        `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
  }

  /** Bytes read from the socket: the upgrade response's head first, then frames. */
  private received(chunk: Buffer): true {
    if (this.upgraded) {
      this.read(chunk);
      return true; // keep reading
    }
    const buffered = this.pending ? Buffer.concat([this.pending, chunk]) : Buffer.from(chunk);
    const end = buffered.indexOf('\r\n\r\n');
    if (end < 0) {
      this.pending = buffered;
      return true;
    }
    this.pending = null;
    this.upgraded = true;
    this.onUpgrade(buffered.subarray(0, end).toString('latin1'));
    if (buffered.length > end + 4) this.read(buffered.subarray(end + 4));
    return true;
  }

  /** Sends a text frame, masked as a client must (RFC 6455 §5.3). */
  send(text: string): void {
    this.socket.write(this.frame(0x1, Buffer.from(text)));
  }

  terminate(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.socket.once('close', () => resolve());
      this.socket.destroy();
    });
  }

  private frame(opcode: number, payload: Buffer): Buffer {
    const length = payload.length;
    const headerLength = length < 126 ? 2 : length < 65536 ? 4 : 10;
    const frame = Buffer.allocUnsafe(headerLength + 4 + length);
    frame[0] = 0x80 | opcode;
    if (length < 126) frame[1] = 0x80 | length;
    else if (length < 65536) {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(length, 2);
    } else {
      frame[1] = 0x80 | 127;
      frame.writeBigUInt64BE(BigInt(length), 2);
    }
    const mask = randomBytes(4);
    mask.copy(frame, headerLength);
    for (let i = 0; i < length; i++) frame[headerLength + 4 + i] = payload[i] ^ mask[i & 3];
    return frame;
  }

  /** Parses every whole frame in the bytes received; a partial one waits for the rest. */
  private read(chunk: Buffer): void {
    const data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    let offset = 0;
    while (data.length - offset >= 2) {
      const first = data[offset];
      let length = data[offset + 1] & 0x7f;
      let start = offset + 2;
      if (data[offset + 1] & 0x80) throw new Error('a server frame must not be masked');
      if (length === 126) {
        if (data.length - offset < 4) break;
        length = data.readUInt16BE(offset + 2);
        start += 2;
      } else if (length === 127) {
        if (data.length - offset < 10) break;
        length = Number(data.readBigUInt64BE(offset + 2));
        start += 8;
      }
      if (data.length < start + length) break;
      const payload = data.subarray(start, start + length);
      offset = start + length;
      const opcode = first & 0x0f;
      if ((first & 0x80) === 0 || opcode === 0x0) throw new Error('the server sent a fragmented message');
      if (opcode === 0x1) this.onText(payload);
      else if (opcode === 0x9) this.socket.write(this.frame(0xa, Buffer.from(payload)));
      else if (opcode === 0x8) this.socket.end();
    }
    if (offset < data.length) this.pending = Buffer.from(data.subarray(offset));
  }
}

/** Opens `count` sockets on /ws, each carrying `perSocket` room subscriptions; resolves once all are open. */
async function openSubscribers(
  target: RealtimeTarget,
  roomIds: string[],
  count: number,
  perSocket: number,
  onEvent?: (eventFrame: Buffer) => void,
): Promise<BenchSocket[]> {
  const wsUrl = target.baseUrl.replace(/^http/, 'ws') + '/ws';
  const token = target.token({ sub: 'bench-reader' });
  const sockets: BenchSocket[] = [];
  const batch = 100; // open in waves, as real clients arrive
  for (let start = 0; start < count; start += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - start) }, async (_, i) => {
        const socketIndex = start + i;
        let opened!: () => void;
        let refused!: (error: Error) => void;
        const allOpen = new Promise<void>((resolve, reject) => ((opened = resolve), (refused = reject)));
        let open = 0;
        const ws = await BenchSocket.open(wsUrl, (data) => {
          // Events are read cheaply, as bytes: only the message id, from the frame's event id, is needed to time a delivery.
          if (data.subarray(0, EVENT_PREFIX.length).equals(EVENT_PREFIX)) {
            onEvent?.(data);
            return;
          }
          const frame = JSON.parse(String(data));
          if (frame[0] === 101 && ++open === perSocket) opened();
          else if (frame[0] === 199) refused(new Error(`subscription refused: ${JSON.stringify(frame)}`));
        });
        sockets.push(ws);
        for (let s = 0; s < perSocket; s++) {
          const room = roomIds[(socketIndex * perSocket + s) % roomIds.length];
          const path = `/services/chatkit/v6/${target.instanceId}/rooms/${room}?message_limit=0`;
          ws.send(JSON.stringify([100, s, path, { Authorization: `Bearer ${token}` }]));
        }
        await allOpen;
      }),
    );
  }
  return sockets;
}

const EVENT_PREFIX = Buffer.from('[102,');
const NEW_MESSAGE = Buffer.from('"new_message"');

/** The event id of an event frame `[102,<subID>,"<id>",…`, read from its bytes: the digits after the first quote. */
function frameEventId(frame: Buffer): number {
  let i = frame.indexOf(0x22) + 1;
  let id = 0;
  for (let c = frame[i]; c >= 0x30 && c <= 0x39; c = frame[++i]) id = id * 10 + (c - 0x30);
  return id;
}

async function closeAll(sockets: BenchSocket[]): Promise<void> {
  await Promise.all(sockets.map((socket) => socket.terminate()));
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

function latencies(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] };
}

async function prepareRoom(target: RealtimeTarget, roomId: string): Promise<void> {
  for (const id of ['bench-sender', 'bench-reader']) {
    await call(target, 'POST', '/users', { id, name: id }).catch((error: Error) => {
      if (!/user_already_exists/.test(error.message)) throw error;
    });
  }
  await call(target, 'POST', '/rooms', { id: roomId, name: roomId, user_ids: ['bench-sender', 'bench-reader'] });
}

/** What the sender thread is asked to do: `messages` sends, one every 1/rate s, not waiting for answers. */
interface SenderJob {
  readonly url: string;
  readonly token: string;
  readonly messages: number;
  readonly ratePerSecond: number;
  readonly label: string;
}

interface SentMessage {
  readonly messageId: number;
  readonly startedMs: number;
  readonly ackedMs: number;
}

/**
 * The sender, on its own thread as a sender is on its own device: its answers are read
 * without queueing behind the thousand subscribers' frames this thread parses. The rate is
 * kept open-loop (a send leaves on schedule whether or not earlier ones were answered), so
 * a slow answer shows as latency instead of lowering the rate.
 */
async function runSender(job: SenderJob): Promise<SentMessage[]> {
  const interval = 1000 / job.ratePerSecond;
  const first = now();
  const sends: Promise<SentMessage>[] = [];
  for (let i = 0; i < job.messages; i++) {
    const due = first + i * interval;
    if (due > now()) await sleep(due - now());
    const startedMs = now();
    sends.push(
      fetch(job.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${job.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ parts: [{ type: 'text/plain', content: `${job.label} ${i}` }] }),
      }).then(async (response) => {
        const ackedMs = now();
        const body = (await response.json()) as { message_id?: number };
        if (response.status !== 201 || typeof body.message_id !== 'number') {
          throw new Error(`send ${i}: ${response.status} ${JSON.stringify(body)}`);
        }
        return { messageId: body.message_id, startedMs, ackedMs };
      }),
    );
  }
  return Promise.all(sends);
}

function sendOnWorker(job: SenderJob): Promise<SentMessage[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: { fanOutSender: job } });
    let result: SentMessage[] | undefined;
    worker.once('message', (message: { sent?: SentMessage[]; error?: string }) => {
      if (message.error) reject(new Error(`fan-out sender: ${message.error}`));
      else result = message.sent;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => (result ? resolve(result) : reject(new Error(`fan-out sender exited with code ${code}`))));
  });
}

if (!isMainThread && (workerData as { fanOutSender?: SenderJob } | null)?.fanOutSender) {
  runSender((workerData as { fanOutSender: SenderJob }).fanOutSender).then(
    (sent) => parentPort!.postMessage({ sent }),
    (error: unknown) => parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) }),
  );
}

export interface FanOutOptions {
  readonly subscribers: number;
  readonly ratePerSecond: number;
  /** Measured messages. */
  readonly messages: number;
  /** Messages sent first at the same rate and not measured (JIT, buffers, caches). */
  readonly warmupMessages: number;
}

/**
 * One room with `subscribers` live subscriptions (one socket each, like separate browsers)
 * and one sender posting at a steady rate. Delivery latency = arrival at a subscriber minus
 * the moment the send request left, so it includes the durable append; the sender's
 * acknowledgement is timed from the same moment, in the same run. The server's CPU time
 * over the measured window, divided by the deliveries, is the cost of one delivery; the same
 * sends before anyone subscribed tell the sends' own share.
 */
export async function benchFanOut(target: RealtimeTarget, options: FanOutOptions): Promise<FanOutResult> {
  const { subscribers, ratePerSecond, messages, warmupMessages } = options;
  const roomId = 'fanout';
  await prepareRoom(target, roomId);
  const job = (count: number, label: string): SenderJob => ({
    url: `${target.baseUrl}/services/chatkit/v6/${target.instanceId}/rooms/${roomId}/messages`,
    token: target.token({ sub: 'bench-sender' }),
    messages: count,
    ratePerSecond,
    label,
  });
  // What a send costs the server by itself: the same sends, before anyone subscribes.
  if (warmupMessages > 0) await sendOnWorker(job(warmupMessages, 'warm-up'));
  await sleep(200); // the projections' share of the warm-up
  const idleBefore = processCpuMs(target.pid);
  await sleep(1000);
  const idleCpuMsPerSecond = processCpuMs(target.pid) - idleBefore;
  const quietBefore = processCpuMs(target.pid);
  await sendOnWorker(job(messages, 'unheard'));
  await sleep(200); // the projections' share of the last sends
  const sendCpuMs = (processCpuMs(target.pid) - quietBefore) / messages;

  let arrivals: { id: number; at: number }[] = [];
  let frameBytes = 0;
  const sockets = await openSubscribers(target, [roomId], subscribers, 1, (frame) => {
    const at = now();
    if (!frame.includes(NEW_MESSAGE)) return;
    frameBytes = frame.length;
    arrivals.push({ id: frameEventId(frame), at });
  });
  const awaitDeliveries = async (expected: number) => {
    const deadline = Date.now() + 10_000;
    while (arrivals.length < expected && Date.now() < deadline) await sleep(10);
  };
  try {
    if (warmupMessages > 0) {
      await sendOnWorker(job(warmupMessages, 'warm-up'));
      await awaitDeliveries(subscribers * warmupMessages);
      arrivals = [];
    }
    const cpuBefore = processCpuMs(target.pid);
    const splitBefore = processCpuSplitMs(target.pid);
    const writesBefore = writeSyscalls(target.pid);
    const clientBefore = process.cpuUsage();
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const windowStart = now();
    const sent = await sendOnWorker(job(messages, 'measured'));
    await awaitDeliveries(subscribers * messages);
    const windowMs = now() - windowStart;
    const serverCpuMs = processCpuMs(target.pid) - cpuBefore;
    const writes = writeSyscalls(target.pid) - writesBefore;
    const splitAfter = processCpuSplitMs(target.pid);
    const userMs = splitAfter.userMs - splitBefore.userMs;
    const kernelMs = splitAfter.kernelMs - splitBefore.kernelMs;
    const client = process.cpuUsage(clientBefore);
    loopDelay.disable();
    const startedById = new Map(sent.map((s) => [s.messageId, s.startedMs]));
    const delivery: number[] = [];
    for (const { id, at } of arrivals) {
      const started = startedById.get(id);
      if (started !== undefined) delivery.push(at - started);
    }
    if (delivery.length < subscribers * messages) {
      throw new Error(`fan-out: ${delivery.length} of ${subscribers * messages} deliveries arrived`);
    }
    process.stderr.write(
      `  measured fan-out server CPU: ${((kernelMs / (userMs + kernelMs)) * 100).toFixed(0)} % in the kernel; ` +
        `${(writes / delivery.length).toFixed(2)} write syscalls per delivery; ${idleCpuMsPerSecond.toFixed(1)} ms/s when idle\n`,
    );
    return {
      subscribers,
      messages,
      ratePerSecond,
      delivery: latencies(delivery),
      ack: latencies(sent.map((s) => s.ackedMs - s.startedMs)),
      serverCpuMs,
      serverCpuPerDeliveryUs: (serverCpuMs * 1000) / delivery.length,
      sendCpuMs,
      deliveryCpuUs: ((serverCpuMs - sendCpuMs * messages) * 1000) / delivery.length,
      frameBytes,
      windowMs,
      clientCpuMs: (client.user + client.system) / 1000,
      clientLoopDelay: { p99Ms: loopDelay.percentile(99) / 1e6, maxMs: loopDelay.max / 1e6 },
      serverKernelShare: kernelMs / (userMs + kernelMs),
      writesPerDelivery: writes / delivery.length,
      idleCpuMsPerSecond,
    };
  } finally {
    await closeAll(sockets);
  }
}

export interface WriteFloorResult {
  /** CPU time of a bare WebSocket server per frame it wrote. */
  readonly cpuPerWriteUs: number;
}

interface FloorJob {
  readonly messages: number;
  readonly ratePerSecond: number;
  readonly frameBytes: number;
}

/**
 * The floor under the fan-out's CPU per delivery on this machine, now: a bare ws server (no
 * Parley, no HTTP, no log) writes one ready-made frame of the same size per socket, at the
 * same rate, to as many sockets of this process; its CPU time per frame is what writing to a
 * loopback TCP socket costs, the kernel's work for both ends included.
 */
export async function benchWriteFloor(sockets: number, job: FloorJob): Promise<WriteFloorResult> {
  const server = fork(__filename, [], { env: { ...process.env, BENCH_WRITE_FLOOR_SERVER: '1' }, stdio: 'inherit' });
  const clients: BenchSocket[] = [];
  try {
    const port = await new Promise<number>((resolve, reject) => {
      server.once('message', (m: { port: number }) => resolve(m.port));
      server.once('exit', (code) => reject(new Error(`write floor server exited with code ${code}`)));
    });
    let arrived = 0;
    for (let start = 0; start < sockets; start += 100) {
      const wave = await Promise.all(
        Array.from({ length: Math.min(100, sockets - start) }, () =>
          BenchSocket.open(`ws://127.0.0.1:${port}/`, (data) => {
            if (data.subarray(0, EVENT_PREFIX.length).equals(EVENT_PREFIX)) arrived++;
          }),
        ),
      );
      clients.push(...wave);
    }
    await sleep(200); // the server has seen every connection
    const before = processCpuMs(server.pid!);
    server.send(job);
    const deadline = Date.now() + 20_000;
    while (arrived < sockets * job.messages && Date.now() < deadline) await sleep(10);
    const cpuMs = processCpuMs(server.pid!) - before;
    if (arrived < sockets * job.messages) throw new Error(`write floor: ${arrived} of ${sockets * job.messages} frames arrived`);
    return { cpuPerWriteUs: (cpuMs * 1000) / arrived };
  } finally {
    await closeAll(clients);
    server.kill();
  }
}

function runWriteFloorServer(): void {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  const sockets: WebSocket[] = [];
  wss.on('connection', (ws) => sockets.push(ws));
  wss.on('listening', () => process.send!({ port: (wss.address() as { port: number }).port }));
  process.once('message', async (job: FloorJob) => {
    const interval = 1000 / job.ratePerSecond;
    const first = now();
    for (let i = 0; i < job.messages; i++) {
      const due = first + i * interval;
      if (due > now()) await sleep(due - now());
      const head = `[102,0,"${i}",{},"`;
      const payload = Buffer.from(`${head}${'x'.repeat(Math.max(0, job.frameBytes - head.length - 2))}"]`);
      const header = payload.length < 126 ? [0x81, payload.length] : [0x81, 126, payload.length >> 8, payload.length & 255];
      const frame = Buffer.concat([Buffer.from(header), payload]);
      // As the bridge writes a shared event: one ready-made frame, one write per socket.
      for (const ws of sockets) (ws as unknown as { _socket: { write(b: Buffer): void } })._socket.write(frame);
    }
  });
}

if (process.env.BENCH_WRITE_FLOOR_SERVER === '1' && process.send) runWriteFloorServer();

/** Resident memory of the server before and after `subscriptions` idle room subscriptions are open. */
export async function benchIdleMemory(target: RealtimeTarget, subscriptions = 10_000, perSocket = 10): Promise<IdleMemoryResult> {
  const roomIds = Array.from({ length: 100 }, (_, i) => `idle-${i}`);
  for (const roomId of roomIds) await prepareRoom(target, roomId);
  await sleep(500);
  const rssBeforeMb = rssMb(target.pid);
  const sockets = await openSubscribers(target, roomIds, subscriptions / perSocket, perSocket);
  try {
    await sleep(1000); // let the server settle (timers, buffers)
    return { subscriptions, sockets: sockets.length, rssBeforeMb, rssAfterMb: rssMb(target.pid) };
  } finally {
    await closeAll(sockets);
  }
}

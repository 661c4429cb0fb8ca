/**
 * Real-time measurements for `npm run bench`, against a running Parley: how fast one message
 * reaches many live subscribers, and how much memory idle subscriptions cost. Clients speak
 * the @pusher/platform WebSocket bridge on /ws, as chatkit-client does.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { WebSocket } from 'ws';

export interface FanOutResult {
  readonly subscribers: number;
  readonly messages: number;
  readonly deliveries: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
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
const now = () => performance.timeOrigin + performance.now();

/** Resident memory of a process, in MiB (Linux /proc). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
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

/** Opens `count` sockets on /ws, each carrying `perSocket` room subscriptions; resolves once all are OPEN. */
async function openSubscribers(
  target: RealtimeTarget,
  roomIds: string[],
  count: number,
  perSocket: number,
  onEvent?: (eventFrame: string) => void,
): Promise<WebSocket[]> {
  const wsUrl = target.baseUrl.replace(/^http/, 'ws') + '/ws';
  const token = target.token({ sub: 'bench-reader' });
  const sockets: WebSocket[] = [];
  const batch = 100; // open in waves, as real clients arrive
  for (let start = 0; start < count; start += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, count - start) }, (_, i) => {
        const socketIndex = start + i;
        return new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(wsUrl);
          sockets.push(ws);
          let open = 0;
          ws.on('error', reject);
          ws.on('open', () => {
            for (let s = 0; s < perSocket; s++) {
              const room = roomIds[(socketIndex * perSocket + s) % roomIds.length];
              const path = `/services/chatkit/v6/${target.instanceId}/rooms/${room}?message_limit=0`;
              ws.send(JSON.stringify([100, s, path, { Authorization: `Bearer ${token}` }]));
            }
          });
          ws.on('message', (data) => {
            const text = String(data);
            // Events are read cheaply (the clients share one core with each other): only the
            // message id, from the frame's event id, is needed to time a delivery.
            if (text.startsWith('[102,')) {
              onEvent?.(text);
              return;
            }
            const frame = JSON.parse(text);
            if (frame[0] === 101 && ++open === perSocket) resolve();
            else if (frame[0] === 199) reject(new Error(`subscription refused: ${JSON.stringify(frame)}`));
          });
        });
      }),
    );
  }
  return sockets;
}

async function closeAll(sockets: WebSocket[]): Promise<void> {
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          ws.once('close', () => resolve());
          ws.terminate();
        }),
    ),
  );
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function prepareRoom(target: RealtimeTarget, roomId: string): Promise<void> {
  for (const id of ['bench-sender', 'bench-reader']) {
    await call(target, 'POST', '/users', { id, name: id }).catch((error: Error) => {
      if (!/user_already_exists/.test(error.message)) throw error;
    });
  }
  await call(target, 'POST', '/rooms', { id: roomId, name: roomId, user_ids: ['bench-sender', 'bench-reader'] });
}

/**
 * One room with `subscribers` live subscriptions (one socket each, like separate browsers);
 * `messages` messages sent one after another; latency = arrival at a subscriber minus the
 * moment the send request left, so it includes the durable append.
 */
export async function benchFanOut(target: RealtimeTarget, subscribers = 1000, messages = 50): Promise<FanOutResult> {
  const roomId = 'fanout';
  await prepareRoom(target, roomId);
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  const pendingLate: { id: number; at: number }[] = [];
  const sockets = await openSubscribers(target, [roomId], subscribers, 1, (frame) => {
    const at = now();
    if (!frame.includes('"new_message"')) return;
    // [102, subID, "<message id>", headers, body]
    const id = Number(/^\[102,\d+,"(\d+)"/.exec(frame)?.[1]);
    const sent = sentAt.get(id);
    if (sent === undefined) pendingLate.push({ id, at });
    else latencies.push(at - sent);
  });
  try {
    const senderToken = target.token({ sub: 'bench-sender' });
    for (let i = 0; i < messages; i++) {
      const started = now();
      const { message_id } = await call(target, 'POST', `/rooms/${roomId}/messages`, { parts: [{ type: 'text/plain', content: `m${i}` }] }, senderToken);
      sentAt.set(message_id, started);
      // Deliveries that beat the send's answer (the id was not known yet).
      for (const late of pendingLate.splice(0)) {
        const sent = sentAt.get(late.id);
        if (sent !== undefined) latencies.push(late.at - sent);
        else pendingLate.push(late);
      }
      await sleep(40);
    }
    const deadline = Date.now() + 10_000;
    while (latencies.length + pendingLate.length < subscribers * messages && Date.now() < deadline) await sleep(50);
    for (const late of pendingLate.splice(0)) {
      const sent = sentAt.get(late.id);
      if (sent !== undefined) latencies.push(late.at - sent);
    }
  } finally {
    await closeAll(sockets);
  }
  if (latencies.length < subscribers * messages) {
    throw new Error(`fan-out: ${latencies.length} of ${subscribers * messages} deliveries arrived`);
  }
  latencies.sort((a, b) => a - b);
  return {
    subscribers,
    messages,
    deliveries: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies[latencies.length - 1],
  };
}

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

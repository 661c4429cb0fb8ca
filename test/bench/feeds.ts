/**
 * Feeds measurements for `npm run bench`, against a running Parley: publish throughput (the
 * requests pusher-feeds-server sends, for autocannon in run.ts) and how fast a published item
 * reaches many live subscribers of its feed. Subscribers speak HTTP SUBSCRIBE as
 * pusher-feeds-client 0.9.1 does (wire study §3.3): one connection each, no token on a
 * public feed, newline-terminated JSON frames.
 */
import type autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import http from 'node:http';
import { Latencies, processCpuMs } from './realtime';
import { percentile } from './scale';

export interface FeedsTarget {
  readonly baseUrl: string;
  readonly pid: number;
  readonly instanceId: string;
  readonly keyId: string;
  readonly keySecret: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;

const feedsBase = (target: FeedsTarget) => `/services/feeds/v1/${target.instanceId}`;
const itemsPath = (target: FeedsTarget, feedId: string) => `${feedsBase(target)}/feeds/${feedId}/items`;

/** The token pusher-feeds-server 0.7.0 sends (wire study §5.3): `app` claim, backdated `iat`, permission `*`/`*`. */
export function feedsServerToken(target: FeedsTarget): string {
  const iat = Math.floor(Date.now() / 1000) - 600;
  return jwt.sign(
    { app: target.instanceId, iss: `api_keys/${target.keyId}`, iat, exp: iat + 86_400, feeds: { permission: { path: '*', action: '*' } } },
    target.keySecret,
    { algorithm: 'HS256' },
  );
}

/** `publish(feedId, item)` as pusher-feeds-server sends it, over `feeds` feeds in turn (1 = every request to one feed). */
export function feedPublishSpec(target: FeedsTarget, feeds: number, label: string): autocannon.RequestSpec {
  let n = 0;
  const feedIds = Array.from({ length: feeds }, (_, i) => `bench-${label}-${i}`);
  return {
    method: 'POST',
    path: itemsPath(target, feedIds[0]),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${feedsServerToken(target)}` },
    setupRequest: (request) => {
      request.path = itemsPath(target, feedIds[n % feeds]);
      request.body = JSON.stringify({ items: [{ text: `bench item ${n++}` }] });
      return request;
    },
  };
}

/** One publish through fetch, checked (200 with `item_ids`), before autocannon hammers the route. */
export async function publishOnce(target: FeedsTarget, feedId: string, item: unknown, token = feedsServerToken(target)): Promise<string> {
  const response = await fetch(target.baseUrl + itemsPath(target, feedId), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ items: [item] }),
  });
  const text = await response.text();
  const id = response.status === 200 ? (JSON.parse(text) as { item_ids?: string[] }).item_ids?.[0] : undefined;
  if (typeof id !== 'string') throw new Error(`feeds publish to ${feedId}: ${response.status} ${text.slice(0, 300)}`);
  return id;
}

export interface FeedFanOutOptions {
  readonly subscribers: number;
  readonly ratePerSecond: number;
  /** Measured publishes. */
  readonly items: number;
  /** Publishes sent first at the same rate and not measured (JIT, buffers). */
  readonly warmupItems: number;
}

export interface FeedFanOutResult extends FeedFanOutOptions {
  /** From the publish request leaving to a subscriber reading the item (durable append included). */
  readonly delivery: Latencies;
  /** From the publish request leaving to its 200. */
  readonly ack: Latencies;
  /** The server's CPU time (every thread) from the first measured publish to the last delivery. */
  readonly serverCpuMs: number;
  readonly windowMs: number;
  readonly serverCpuPerDeliveryUs: number;
  /** Server CPU per publish at the same rate before anyone subscribed. */
  readonly publishCpuMs: number;
  /** The window's CPU less the publishes' own, over the deliveries. */
  readonly deliveryCpuUs: number;
}

function latencies(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] };
}

/**
 * Opens `count` HTTP SUBSCRIBE streams on a feed; resolves once each has read its first
 * (type 0) event. `onItem` gets the id of every item event, read cheaply from the frame head.
 */
async function openFeedSubscribers(target: FeedsTarget, feedId: string, count: number, onItem: (id: number, at: number) => void): Promise<http.ClientRequest[]> {
  const url = new URL(target.baseUrl + itemsPath(target, feedId));
  const requests: http.ClientRequest[] = [];
  const batch = 100; // open in waves, as real clients arrive
  for (let start = 0; start < count; start += batch) {
    await Promise.all(
      Array.from(
        { length: Math.min(batch, count - start) },
        () =>
          new Promise<void>((resolve, reject) => {
            // agent: false, one connection per subscriber, as each browser has its own.
            const request = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'SUBSCRIBE', agent: false });
            requests.push(request);
            request.on('error', reject);
            request.on('response', (response) => {
              if (response.statusCode !== 200) return reject(new Error(`feed SUBSCRIBE: ${response.statusCode}`));
              response.setEncoding('utf8');
              let pending = '';
              let opened = false;
              response.on('data', (chunk: string) => {
                const at = now();
                const lines = (pending + chunk).split('\n');
                pending = lines.pop()!;
                for (const line of lines) {
                  // [1, "<event id>", {headers}, {type, data}]: the type-0 event opens, type 1 is an item.
                  const head = /^\[1,"(\d+)",\{[^}]*\},\{"type":(\d)/.exec(line);
                  if (!head) continue;
                  if (head[2] === '1') onItem(Number(head[1]), at);
                  else if (!opened) {
                    opened = true;
                    resolve();
                  }
                }
              });
              response.on('error', reject);
            });
            request.end();
          }),
      ),
    );
  }
  return requests;
}

interface Published {
  readonly id: number;
  readonly startedMs: number;
  readonly ackedMs: number;
}

/** `count` publishes to one feed, one every 1/rate s, open-loop (not waiting for answers). */
async function publishAtRate(target: FeedsTarget, feedId: string, count: number, ratePerSecond: number, label: string): Promise<Published[]> {
  const token = feedsServerToken(target);
  const interval = 1000 / ratePerSecond;
  const first = now();
  const sends: Promise<Published>[] = [];
  for (let i = 0; i < count; i++) {
    const due = first + i * interval;
    if (due > now()) await sleep(due - now());
    const startedMs = now();
    sends.push(publishOnce(target, feedId, { text: `${label} ${i}` }, token).then((id) => ({ id: Number(id), startedMs, ackedMs: now() })));
  }
  return Promise.all(sends);
}

/**
 * One public feed with `subscribers` live HTTP SUBSCRIBE streams and one publisher at a steady
 * rate. Delivery latency = arrival at a subscriber minus the moment the publish left (the
 * durable append included). The server's CPU time over the window, over the deliveries, is
 * the cost of one delivery; the same publishes before anyone subscribed tell their own share.
 */
export async function benchFeedFanOut(target: FeedsTarget, options: FeedFanOutOptions): Promise<FeedFanOutResult> {
  const { subscribers, ratePerSecond, items, warmupItems } = options;
  const feedId = 'bench-fanout';
  if (warmupItems > 0) await publishAtRate(target, feedId, warmupItems, ratePerSecond, 'warm-up');
  const quietBefore = processCpuMs(target.pid);
  await publishAtRate(target, feedId, items, ratePerSecond, 'unheard');
  await sleep(200); // the projections' share of the last publishes
  const publishCpuMs = (processCpuMs(target.pid) - quietBefore) / items;

  let arrivals: { id: number; at: number }[] = [];
  const streams = await openFeedSubscribers(target, feedId, subscribers, (id, at) => arrivals.push({ id, at }));
  const awaitDeliveries = async (expected: number) => {
    const deadline = Date.now() + 10_000;
    while (arrivals.length < expected && Date.now() < deadline) await sleep(10);
  };
  try {
    if (warmupItems > 0) {
      await publishAtRate(target, feedId, warmupItems, ratePerSecond, 'warm-up');
      await awaitDeliveries(subscribers * warmupItems);
      arrivals = [];
    }
    const cpuBefore = processCpuMs(target.pid);
    const windowStart = now();
    const published = await publishAtRate(target, feedId, items, ratePerSecond, 'measured');
    await awaitDeliveries(subscribers * items);
    const windowMs = now() - windowStart;
    const serverCpuMs = processCpuMs(target.pid) - cpuBefore;
    const startedById = new Map(published.map((p) => [p.id, p.startedMs]));
    const delivery: number[] = [];
    for (const { id, at } of arrivals) {
      const started = startedById.get(id);
      if (started !== undefined) delivery.push(at - started);
    }
    if (delivery.length < subscribers * items) throw new Error(`feeds fan-out: ${delivery.length} of ${subscribers * items} deliveries arrived`);
    return {
      ...options,
      delivery: latencies(delivery),
      ack: latencies(published.map((p) => p.ackedMs - p.startedMs)),
      serverCpuMs,
      windowMs,
      serverCpuPerDeliveryUs: (serverCpuMs * 1000) / delivery.length,
      publishCpuMs,
      deliveryCpuUs: ((serverCpuMs - publishCpuMs * items) * 1000) / delivery.length,
    };
  } finally {
    for (const stream of streams) stream.destroy();
  }
}

/** The report's lines for the fan-out (the publish rows are in run.ts's table). */
export function feedFanOutLines(r: FeedFanOutResult): string[] {
  const l = (x: Latencies) => `p50 ${x.p50Ms.toFixed(1)} ms, p99 ${x.p99Ms.toFixed(1)} ms, max ${x.maxMs.toFixed(1)} ms`;
  return [
    `feeds fan-out: ${r.subscribers.toLocaleString('en-US')} HTTP SUBSCRIBE subscribers of one feed, one publisher at ${r.ratePerSecond} items/s, ` +
      `${r.items} items measured, ${r.delivery.count.toLocaleString('en-US')} deliveries (times from the publish request leaving)`,
    `  delivery to the subscribers: ${l(r.delivery)}`,
    `  the publisher's 200:         ${l(r.ack)}`,
    `  server CPU: ${r.serverCpuMs.toFixed(0)} ms in ${r.windowMs.toFixed(0)} ms = ${r.serverCpuPerDeliveryUs.toFixed(1)} µs per delivered item, ` +
      `publishes included; each publish ${r.publishCpuMs.toFixed(2)} ms (measured alone, before anyone subscribed), each delivery ${r.deliveryCpuUs.toFixed(1)} µs`,
  ];
}

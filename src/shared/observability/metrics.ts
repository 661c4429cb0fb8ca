import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus instruments, in a registry of their own (not prom-client's global
 * one, which libraries may fill), served at /metrics. Code records into these few functions;
 * nothing else imports prom-client, and domain code and projections record nothing.
 *
 * Hot paths stay cheap: a request records once when it ends, an append once per batch, a
 * projector once per batch, a live fan-out once per batch of deliveries. Open sockets and
 * lag are read only when scraped.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'parley_' });

/** Seconds, from 1 ms to 10 s: requests, appends, batches, deliveries. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BATCH_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2000];

const httpRequests = new Counter({
  name: 'parley_http_requests_total',
  help: 'HTTP requests answered, by method, route pattern (never the raw URL) and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [metricsRegistry],
});
const httpDuration = new Histogram({
  name: 'parley_http_request_duration_seconds',
  help: 'Time from a request arriving to its answer being sent, by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});
const appendDuration = new Histogram({
  name: 'parley_event_append_duration_seconds',
  help: 'Time one durable append of a batch of events to a stream took (the commit included)',
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});
const appendBatch = new Histogram({
  name: 'parley_event_append_batch_events',
  help: 'Events written by one append (commands for one stream that arrived together are appended together)',
  buckets: BATCH_BUCKETS,
  registers: [metricsRegistry],
});
const projectorBatch = new Histogram({
  name: 'parley_projector_batch_events',
  help: 'Events one projector batch folded and wrote with its checkpoints (projections held by this process)',
  buckets: BATCH_BUCKETS,
  registers: [metricsRegistry],
});
const projectorBatchDuration = new Histogram({
  name: 'parley_projector_batch_duration_seconds',
  help: 'Time one projector batch took to fold and write (projections held by this process)',
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});
const fanOutDelay = new Histogram({
  name: 'parley_fanout_delivery_seconds',
  help: 'Time from an event being committed to the log to its frames being written to every subscribed socket (observed once per fan-out batch, for its oldest event)',
  buckets: LATENCY_BUCKETS,
  registers: [metricsRegistry],
});

/** What one transport has open now. */
export interface OpenStreamCounts {
  readonly sockets: number;
  readonly subscriptions: number;
}
const streamSources = new Set<{ readonly transport: string; readonly count: () => OpenStreamCounts }>();
const sum = (transport: string, pick: (c: OpenStreamCounts) => number) => {
  let total = 0;
  for (const source of streamSources) if (source.transport === transport) total += pick(source.count());
  return total;
};
/** Both transports always appear, at 0 when nothing is open. */
const TRANSPORTS = ['ws', 'http_subscribe'];
new Gauge({
  name: 'parley_open_sockets',
  help: 'Client connections open now, by transport (ws: WebSockets on /ws; http_subscribe: SUBSCRIBE streams)',
  labelNames: ['transport'] as const,
  registers: [metricsRegistry],
  collect() {
    for (const transport of TRANSPORTS) this.set({ transport }, sum(transport, (c) => c.sockets));
  },
});
new Gauge({
  name: 'parley_open_subscriptions',
  help: 'Subscriptions open now, by transport (a WebSocket carries many)',
  labelNames: ['transport'] as const,
  registers: [metricsRegistry],
  collect() {
    for (const transport of TRANSPORTS) this.set({ transport }, sum(transport, (c) => c.subscriptions));
  },
});

const lagEvents = new Gauge({
  name: 'parley_projection_lag_events',
  help: 'How far each projection version is behind the head of the log, in events (SQLite log)',
  labelNames: ['projection', 'role'] as const,
  registers: [metricsRegistry],
});
const lagLogBytes = new Gauge({
  name: 'parley_projection_lag_log_bytes',
  help: 'How far each projection version is behind the head of the log, in bytes of log (EventStoreDB, whose positions are offsets)',
  labelNames: ['projection', 'role'] as const,
  registers: [metricsRegistry],
});
const lagSeconds = new Gauge({
  name: 'parley_projection_lag_seconds',
  help: 'Age of the oldest event a projection version has not folded yet (0 when caught up)',
  labelNames: ['projection', 'role'] as const,
  registers: [metricsRegistry],
});
const rebuildFolded = new Gauge({
  name: 'parley_projection_rebuild_folded_events',
  help: 'While a new projection version builds beside the serving one: events it has folded (SQLite log)',
  labelNames: ['projection'] as const,
  registers: [metricsRegistry],
});
const rebuildTotal = new Gauge({
  name: 'parley_projection_rebuild_total_events',
  help: 'While a new projection version builds beside the serving one: events it must fold to catch up (SQLite log)',
  labelNames: ['projection'] as const,
  registers: [metricsRegistry],
});
const rebuildFoldedLogBytes = new Gauge({
  name: 'parley_projection_rebuild_folded_log_bytes',
  help: 'While a new projection version builds beside the serving one: bytes of log it has folded (EventStoreDB)',
  labelNames: ['projection'] as const,
  registers: [metricsRegistry],
});
const rebuildTotalLogBytes = new Gauge({
  name: 'parley_projection_rebuild_total_log_bytes',
  help: 'While a new projection version builds beside the serving one: bytes of log it must fold to catch up (EventStoreDB)',
  labelNames: ['projection'] as const,
  registers: [metricsRegistry],
});

const spaceLeft = new Gauge({
  name: 'parley_event_log_space_left_bytes',
  help: 'How many more bytes the event log can take before appends are refused for room (SQLite: its volume or page limit; absent on EventStoreDB)',
  registers: [metricsRegistry],
});
const lowSpace = new Gauge({
  name: 'parley_event_log_low_space',
  help: '1 while the event log has less room than STORAGE_LOW_SPACE_BYTES (a warning: the process keeps serving), else 0',
  registers: [metricsRegistry],
});

/** The event log's room as /health computes it; unknown (EventStoreDB) leaves both gauges out. */
export function recordEventLogSpace(space: { readonly space_left_bytes?: number; readonly low_space?: boolean }): void {
  spaceLeft.reset();
  lowSpace.reset();
  if (space.space_left_bytes === undefined) return;
  spaceLeft.set(space.space_left_bytes);
  lowSpace.set(space.low_space ? 1 : 0);
}

/** One answered HTTP request; `route` is the pattern it matched (`unmatched` for none). */
export function recordHttpRequest(method: string, route: string, status: number, seconds: number): void {
  const labels = { method, route, status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
}

/** One append of `events` events that took `seconds`. */
export function recordAppend(events: number, seconds: number): void {
  appendDuration.observe(seconds);
  appendBatch.observe(events);
}

/** One projector batch of `events` events that took `seconds`. */
export function recordProjectorBatch(events: number, seconds: number): void {
  projectorBatch.observe(events);
  projectorBatchDuration.observe(seconds);
}

/** A fan-out's oldest event was committed `seconds` before its frames were all written. */
export function recordFanOutDelivery(seconds: number): void {
  fanOutDelay.observe(Math.max(0, seconds));
}

/** Makes a transport's open connections count on every scrape; returns the removal. */
export function countOpenStreams(transport: 'ws' | 'http_subscribe', count: () => OpenStreamCounts): () => void {
  const source = { transport, count };
  streamSources.add(source);
  return () => streamSources.delete(source);
}

/** Where one projection version stands, as /health computes it. */
export interface ProjectionLag {
  readonly role?: 'building' | 'retired';
  /** One of the two, as /health reports it: events (SQLite) or bytes of log (EventStoreDB). */
  readonly lag_events?: number;
  readonly lag_log_bytes?: number;
  readonly lag_seconds: number;
  /** Log positions (in the lag's unit) folded so far and to fold in all (the head): set while it builds. */
  readonly folded?: number;
  readonly head?: number;
}

/** Replaces the projection gauges with the projections as they stand now (called on each scrape). */
export function recordProjections(projections: Readonly<Record<string, ProjectionLag>>): void {
  for (const gauge of [lagEvents, lagLogBytes, lagSeconds, rebuildFolded, rebuildTotal, rebuildFoldedLogBytes, rebuildTotalLogBytes]) gauge.reset();
  for (const [projection, p] of Object.entries(projections)) {
    const role = p.role ?? 'serving';
    const inBytes = p.lag_log_bytes !== undefined;
    (inBytes ? lagLogBytes : lagEvents).set({ projection, role }, p.lag_log_bytes ?? p.lag_events ?? 0);
    lagSeconds.set({ projection, role }, p.lag_seconds);
    if (p.role === 'building' && p.folded !== undefined && p.head !== undefined) {
      (inBytes ? rebuildFoldedLogBytes : rebuildFolded).set({ projection }, p.folded);
      (inBytes ? rebuildTotalLogBytes : rebuildTotal).set({ projection }, p.head);
    }
  }
}

/**
 * Beams measurements for `npm run bench`, against a running Parley: publish throughput (the
 * requests @pusher/push-notifications-server sends, for autocannon in run.ts) and the time from
 * a publish to its Web Push deliveries at 1,000 devices, at a local HTTPS push service that
 * counts arrivals (it does not decrypt; the e2e test does).
 *
 * Publishes to interests are limited to 100 a second per instance (a token bucket), so the
 * interests scenario rotates over many instances created before the server starts; publishes
 * to users are not limited and use one instance.
 */
import type autocannon from 'autocannon';
import type { INestApplicationContext } from '@nestjs/common';
import type { Runtime } from '../../src/app/runtime';
import { execFileSync } from 'node:child_process';
import { createECDH, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { Latencies, processCpuMs } from './realtime';
import { percentile } from './scale';

export interface BeamsTarget {
  readonly baseUrl: string;
  readonly instanceId: string;
  readonly secret: string;
}

export interface WebPushDeliveryResult {
  readonly devices: number;
  /** From the publish request leaving to its `{publishId}`. */
  readonly ackMs: number;
  /** From the publish request leaving to each device's push arriving at the push service. */
  readonly arrivals: Latencies & { readonly firstMs: number };
  /** Setting up: registering the devices and their interest through the device API. */
  readonly registerMs: number;
  /** The server's CPU time from the publish to the last arrival, over the pushes: less noisy than times on a busy machine. */
  readonly serverCpuPerPushMs: number;
}

const PROJECT_ROOT = resolve(__dirname, '..', '..', '..');
const CERT_DIR = join(PROJECT_ROOT, 'test', '.certs');
const CERT_FILE = join(CERT_DIR, 'localhost.pem');
const KEY_FILE = join(CERT_DIR, 'localhost-key.pem');
/** Device API calls in flight while registering. */
const REGISTER_CONCURRENCY = 20;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What the Parley child needs to push to the local push service: its host allowed, and the
 * test certificate trusted (Node reads NODE_EXTRA_CA_CERTS only at start, hence the child).
 */
export function beamsChildEnv(): Record<string, string> {
  if (!existsSync(CERT_FILE) || !existsSync(KEY_FILE)) execFileSync(process.execPath, [join(PROJECT_ROOT, 'test', 'support', 'make-cert.js')]);
  return { BEAMS_WEB_PUSH_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: CERT_FILE };
}

/** Creates `count` instances, each with a key of `secret`, in a data directory no server runs on yet. */
export async function createBeamsInstances(dataDir: string, count: number, secret: string): Promise<string[]> {
  // Loaded here, not at the top: the other scenarios' client process does not carry the whole app.
  const [{ NestFactory }, { CommandBus }, { AppModule }, { openRuntime }, { loadConfig }, { CreateInstanceCommand }, { CreateKeyCommand }] = await Promise.all([
    import('@nestjs/core'),
    import('@nestjs/cqrs'),
    import('../../src/app/app.module'),
    import('../../src/app/runtime'),
    import('../../src/config/config'),
    import('../../src/modules/instances/create-instance/create-instance.handler'),
    import('../../src/modules/instances/create-key/create-key.handler'),
  ]);
  let runtime: Runtime | undefined;
  let app: INestApplicationContext | undefined;
  const ids = Array.from({ length: count }, (_, i) => `beams-bench-${i}`);
  try {
    runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }), 'in-process');
    app = await NestFactory.createApplicationContext(AppModule.forRuntime(runtime), { logger: false, abortOnError: false });
    const commands = app.get(CommandBus);
    const actor = { key_id: 'bench-setup' };
    for (const id of ids) {
      await commands.execute(new CreateInstanceCommand(id, 'bench', actor));
      await commands.execute(new CreateKeyCommand(id, 'bench-key', secret, actor));
    }
    return ids;
  } finally {
    await app?.close().catch(() => undefined);
    await runtime?.close().catch(() => undefined);
  }
}

const publishPath = (instanceId: string, kind: 'interests' | 'users') => `/publish_api/v1/instances/${instanceId}/publishes/${kind}`;
const web = (n: number) => ({ web: { notification: { title: 'Bench', body: `publish ${n}` } } });

/** One publish through fetch, checked (200 with a publishId), before autocannon hammers the route. */
export async function publishOnce(target: BeamsTarget, kind: 'interests' | 'users', body: object): Promise<string> {
  const response = await fetch(target.baseUrl + publishPath(target.instanceId, kind), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.secret}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const publishId = response.status === 200 ? (JSON.parse(text) as { publishId?: unknown }).publishId : undefined;
  if (typeof publishId !== 'string') throw new Error(`publish to ${kind}: ${response.status} ${text}`);
  return publishId;
}

/** `publishToInterests` as the server SDK sends it, each request to the next of `instanceIds` (each limited to 100/s). */
export function interestsPublishSpec(instanceIds: readonly string[], secret: string): autocannon.RequestSpec {
  let n = 0;
  return {
    method: 'POST',
    path: publishPath(instanceIds[0], 'interests'),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
    setupRequest: (request) => {
      request.path = publishPath(instanceIds[n % instanceIds.length], 'interests');
      request.body = JSON.stringify({ interests: [`bench-${n % 100}`], ...web(n++) });
      return request;
    },
  };
}

/** `publishToUsers` to one instance (not rate limited). */
export function usersPublishSpec(target: BeamsTarget): autocannon.RequestSpec {
  let n = 0;
  return {
    method: 'POST',
    path: publishPath(target.instanceId, 'users'),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.secret}` },
    setupRequest: (request) => {
      request.body = JSON.stringify({ users: [`bench-user-${n % 1000}`], ...web(n++) });
      return request;
    },
  };
}

/** Runs `task` over `items` with at most `limit` in flight. */
async function inPool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Registers `devices` Web Push devices on one interest (their endpoints at a local HTTPS push
 * service), publishes to that interest, and times each device's push arriving there.
 */
export async function benchWebPushDelivery(target: BeamsTarget, serverPid: number, devices: number, progress: (line: string) => void): Promise<WebPushDeliveryResult> {
  const arrivals = new Map<string, number>();
  let counting = false;
  const pushService = createServer({ cert: readFileSync(CERT_FILE), key: readFileSync(KEY_FILE) }, (request, response) => {
    request.resume();
    request.on('end', () => {
      if (counting && !arrivals.has(request.url!)) arrivals.set(request.url!, now());
      response.writeHead(201).end();
    });
  });
  await new Promise<void>((r) => pushService.listen(0, '127.0.0.1', r));
  const pushPort = (pushService.address() as AddressInfo).port;
  try {
    // One browser key pair for every device: the server encrypts for each device all the same.
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const keys = { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
    const deviceApi = `${target.baseUrl}/device_api/v1/instances/${target.instanceId}/devices/web`;
    const call = async (method: string, url: string, body: unknown) => {
      const response = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${method} ${url}: ${response.status} ${text}`);
      return text ? (JSON.parse(text) as { id?: string }) : {};
    };
    const interest = 'bench-delivery';
    const register = async (n: number) => {
      const token = Buffer.from(JSON.stringify({ endpoint: `https://localhost:${pushPort}/push/${n}`, keys })).toString('base64');
      const { id } = await call('POST', deviceApi, { token, metadata: { sdkVersion: 'bench' } });
      await call('PUT', `${deviceApi}/${id}/interests`, { interests: [n < 0 ? 'bench-warmup' : interest] });
    };
    const registerStarted = now();
    await inPool(
      Array.from({ length: devices }, (_, n) => n),
      REGISTER_CONCURRENCY,
      register,
    );
    const registerMs = now() - registerStarted;
    progress(`  setup    ${devices} Web Push devices registered in ${(registerMs / 1000).toFixed(1)} s`);

    // Warm-up: one device, so the measured publish does not pay for cold code paths.
    await register(-1);
    counting = true;
    await publishOnce(target, 'interests', { interests: ['bench-warmup'], ...web(-1) });
    for (const deadline = now() + 60_000; !arrivals.has('/push/-1'); await sleep(20)) {
      if (now() > deadline) throw new Error('the warm-up push did not arrive within 60 s');
    }
    arrivals.clear();

    const cpuBefore = processCpuMs(serverPid);
    const sent = now();
    await publishOnce(target, 'interests', { interests: [interest], ...web(0) });
    const ackMs = now() - sent;
    // A generous bound: deliveries retry with backoff, so a stuck delivery shows up as a failure here.
    for (const deadline = now() + 300_000; arrivals.size < devices; await sleep(20)) {
      if (now() > deadline) throw new Error(`only ${arrivals.size} of ${devices} pushes arrived within 300 s`);
    }
    const serverCpuPerPushMs = (processCpuMs(serverPid) - cpuBefore) / devices;
    const times = [...arrivals.values()].map((t) => t - sent).sort((a, b) => a - b);
    return {
      devices,
      ackMs,
      registerMs,
      serverCpuPerPushMs,
      arrivals: { count: times.length, firstMs: times[0], p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), maxMs: times[times.length - 1] },
    };
  } finally {
    pushService.closeAllConnections();
    await new Promise((r) => pushService.close(r));
  }
}

export function webPushDeliveryLines(r: WebPushDeliveryResult): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    `beams Web Push delivery: one publish to an interest of ${r.devices.toLocaleString('en-US')} devices (local HTTPS push service; ` +
      `times from the publish request leaving; one measured publish after a one-device warm-up)`,
    `  publish answered {publishId} after ${r.ackMs.toFixed(1)} ms; pushes arrived: first ${s(r.arrivals.firstMs)}, ` +
      `p50 ${s(r.arrivals.p50Ms)}, p99 ${s(r.arrivals.p99Ms)}, last ${s(r.arrivals.maxMs)} ` +
      `(${(r.devices / (r.arrivals.maxMs / 1000)).toFixed(0)} pushes/s overall)`,
    `  server CPU ${r.serverCpuPerPushMs.toFixed(2)} ms per push (encryption, VAPID signature, HTTPS request, the delivery record), ` +
      `so about ${(1000 / r.serverCpuPerPushMs).toFixed(0)} pushes/s per core`,
    `  the accepting process starts the delivery at once (50 pushes in flight, kept-alive connections, one VAPID signature per push service); ` +
      `the once-a-second sweep only picks up publishes other processes or a restart left`,
  ];
}

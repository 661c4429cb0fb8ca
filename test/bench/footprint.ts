/**
 * The `footprint` scenario's measurements: bytes on disk per stored message and resident memory
 * before any client, each beside a floor measured in the same run.
 *
 * - Disk: short messages (4–9-byte bodies, as the peers were measured with) sent over HTTP to a
 *   fresh data directory, then, once every projection has folded them, the growth of each of its
 *   files divided by the messages: the log, the read models, the data keys, with and without
 *   their write-ahead logs. The floor is a bare SQLite table of the same messages (integer id,
 *   room, sender, body, time) in WAL mode, its WAL checkpointed away.
 * - Memory: the server's RSS once healthy and settled, before any request but /health; the floor
 *   is the bench's bare Fastify + better-sqlite3 server (baseline-server.ts) measured the same way.
 */
import Database from 'better-sqlite3';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** What a running server the scenario measures looks like to it. */
export interface FootprintTarget {
  readonly baseUrl: string;
  readonly pid: number;
  readonly dataDir: string;
  readonly instanceId: string;
  /** Mints an access token (su, or acting as `sub`). */
  token(claims: { sub?: string; su?: boolean }): string;
}

/** Bytes of each file of a data directory (its subdirectories' files under their relative names). */
export type FileSizes = ReadonlyMap<string, number>;

export interface DiskFootprint {
  readonly messages: number;
  readonly sendMs: number;
  /** Sizes before the first message (an empty instance) and after the last one was folded. */
  readonly before: FileSizes;
  readonly after: FileSizes;
  /** The floor's bytes per message: a bare SQLite table of the same messages. */
  readonly floorBytesPerMessage: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every file under `dir` with its size in bytes. */
export function fileSizes(dir: string): FileSizes {
  const sizes = new Map<string, number>();
  const walk = (at: string, prefix: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`);
      else if (entry.isFile()) sizes.set(`${prefix}${entry.name}`, statSync(path).size);
    }
  };
  walk(dir, '');
  return sizes;
}

/** The resident memory of a process, in MiB (Linux). */
export function rssMib(pid: number): number {
  const status = require('node:fs').readFileSync(`/proc/${pid}/status`, 'utf8') as string;
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

/**
 * A process's RSS once it has settled: sampled every 250 ms until eight seconds' samples stay
 * within 1 MiB of each other (start-up garbage collected, lazy work done), at most `maxMs`.
 */
export async function settledRssMib(pid: number, maxMs = 40_000): Promise<number> {
  const samples: number[] = [];
  const deadline = performance.now() + maxMs;
  for (;;) {
    samples.push(rssMib(pid));
    const last = samples.slice(-32);
    if (last.length === 32 && Math.max(...last) - Math.min(...last) < 1) return last[last.length - 1];
    if (performance.now() > deadline) return samples[samples.length - 1];
    await sleep(250);
  }
}

/** The body of the n-th message: 4 to 9 bytes ("msg0" … "msg999999"). */
export const shortBody = (n: number): string => `msg${n % 1_000_000}`;

/**
 * Sends `messages` short messages over HTTP from `senders` users to one room (each sender one
 * request at a time), waits until every projection has folded them (/health: lag 0), and
 * returns the data directory's files before and after, with the floor measured on the same
 * messages.
 */
export async function benchDiskFootprint(target: FootprintTarget, messages: number, senders = 20): Promise<DiskFootprint> {
  const su = target.token({ sub: 'fp-0', su: true });
  const call = async (method: string, path: string, body: unknown, token = su): Promise<unknown> => {
    const response = await fetch(`${target.baseUrl}/services/chatkit/v6/${target.instanceId}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const userIds = Array.from({ length: senders }, (_, n) => `fp-${n}`);
  for (const id of userIds) await call('POST', '/users', { id, name: id });
  await call('POST', '/rooms', { id: 'footprint', name: 'footprint', user_ids: userIds });
  await caughtUp(target.baseUrl);
  const before = fileSizes(target.dataDir);

  const started = performance.now();
  let next = 0;
  await Promise.all(
    userIds.map(async (userId) => {
      const token = target.token({ sub: userId });
      for (let n = next++; n < messages; n = next++) {
        await call('POST', '/rooms/footprint/messages', { parts: [{ type: 'text/plain', content: shortBody(n) }] }, token);
      }
    }),
  );
  const sendMs = performance.now() - started;
  await caughtUp(target.baseUrl);
  // The checkpoint threads copy the WALs in every 100 ms: the files as they stand once settled.
  await sleep(1_000);
  return { messages, sendMs, before, after: fileSizes(target.dataDir), floorBytesPerMessage: floorBytesPerMessage(target.dataDir, messages, senders) };
}

/** Waits until /health reports every projection at lag 0. */
async function caughtUp(baseUrl: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const health = (await (await fetch(`${baseUrl}/health`)).json()) as { projections?: Record<string, { lag_events?: number }> };
    if (Object.values(health.projections ?? {}).every((p) => (p.lag_events ?? 0) === 0)) return;
    if (performance.now() > deadline) throw new Error('the projections did not catch up');
    await sleep(100);
  }
}

/** Bytes per message of a bare SQLite table holding the same messages (in `dir`, removed after). */
function floorBytesPerMessage(dir: string, messages: number, senders: number): number {
  const file = join(dir, 'floor.sqlite');
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE messages (id INTEGER PRIMARY KEY, room_id TEXT NOT NULL, user_id TEXT NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL)');
    const empty = statSync(file).size;
    const insert = db.prepare('INSERT INTO messages (room_id, user_id, body, created_at) VALUES (?, ?, ?, ?)');
    const now = Date.now();
    db.transaction(() => {
      for (let n = 0; n < messages; n++) insert.run('footprint', `fp-${n % senders}`, shortBody(n), now + n);
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return (statSync(file).size - empty) / messages;
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) require('node:fs').rmSync(`${file}${suffix}`, { force: true });
  }
}

/** Which part of the data directory a file belongs to, for the report. */
function partOf(name: string): string {
  if (name.startsWith('events.sqlite')) return 'log (events.sqlite)';
  if (name.startsWith('read-models.sqlite')) return 'read models (read-models.sqlite)';
  if (name.startsWith('keys.sqlite')) return 'data keys (keys.sqlite)';
  return 'other';
}

const isWal = (name: string) => name.endsWith('-wal') || name.endsWith('-shm');

/** Bytes per message by part, with and without WAL files: the report's lines. */
export function diskFootprintLines(d: DiskFootprint): string[] {
  const grown = new Map<string, { file: number; wal: number }>();
  const names = new Set([...d.before.keys(), ...d.after.keys()]);
  for (const name of names) {
    const growth = (d.after.get(name) ?? 0) - (d.before.get(name) ?? 0);
    const part = grown.get(partOf(name)) ?? { file: 0, wal: 0 };
    if (isWal(name)) part.wal += growth;
    else part.file += growth;
    grown.set(partOf(name), part);
  }
  const per = (bytes: number) => (bytes / d.messages).toFixed(0);
  let files = 0;
  let wal = 0;
  const lines = [
    `footprint on disk: ${d.messages.toLocaleString('en-US')} messages of 4–9 bytes sent over HTTP in ${(d.sendMs / 1000).toFixed(1)} s, ` +
      'bytes per message once every projection folded them (growth of each file from the empty instance)',
  ];
  for (const [part, { file, wal: w }] of [...grown].sort()) {
    files += file;
    wal += w;
    lines.push(`  ${part.padEnd(34)} ${per(file).padStart(6)} B/message, WAL and shm ${per(w).padStart(6)} B/message`);
  }
  lines.push(`  all files without WAL: ${per(files)} B/message; all-in with WAL: ${per(files + wal)} B/message`);
  lines.push(`  floor: a bare SQLite table of the same messages: ${d.floorBytesPerMessage.toFixed(0)} B/message (Parley without WAL = ${(files / d.messages / d.floorBytesPerMessage).toFixed(1)}× it)`);
  return lines;
}

/** Bytes per message, all files (WAL included) and without WAL files, of a directory's `sizes` less `base`'s. */
export function bytesPerMessage(messages: number, sizes: FileSizes, base: FileSizes = new Map()): { all: number; withoutWal: number } {
  let all = 0;
  let withoutWal = 0;
  for (const [name, size] of sizes) {
    const growth = size - (base.get(name) ?? 0);
    all += growth;
    if (!isWal(name)) withoutWal += growth;
  }
  for (const [name, size] of base) {
    if (sizes.has(name)) continue;
    all -= size;
    if (!isWal(name)) withoutWal -= size;
  }
  return { all: all / messages, withoutWal: withoutWal / messages };
}

/**
 * `node dist/test/bench/idle-rss.js [entry...]`: starts a Parley server (dist/src/main.js, or each
 * entry given) on a fresh data directory, waits for /health 200 and a settled RSS, prints it and
 * the process's thread count, and stops it. The footprint scenario's memory half, alone.
 *
 * Several entries (builds to compare) are measured in turn, one server at a time, A B A B…, for
 * IDLE_RSS_ROUNDS rounds (default 1), then each entry's runs and median are printed: RSS varies
 * by a few MiB from one start to the next and with the machine's load, so one run each says little.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parleyEnv } from './bench-server';
import { settledRssMib } from './footprint';

interface IdleRss {
  readonly mib: number;
  readonly threads: number;
}

/** One start of `entry` on a fresh data directory: its settled RSS before any client. */
async function idleRss(entry: string): Promise<IdleRss> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-idle-rss-'));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [entry], { env: { ...process.env, ...parleyEnv(dataDir), PORT: String(port), HOST: '127.0.0.1' }, stdio: 'inherit' });
  try {
    for (const deadline = Date.now() + 60_000; ; ) {
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.status === 200, () => false);
      if (ok) break;
      if (Date.now() > deadline) throw new Error('not healthy within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const mib = await settledRssMib(child.pid!);
    return { mib, threads: readdirSync(`/proc/${child.pid}/task`).length };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function main(): Promise<void> {
  const given = process.argv.slice(2);
  const entries = (given.length ? given : [join(__dirname, '..', '..', 'src', 'main.js')]).map((entry) => resolve(entry));
  const rounds = Number(process.env.IDLE_RSS_ROUNDS ?? 1);
  const runs = entries.map((): IdleRss[] => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, entry] of entries.entries()) {
      const run = await idleRss(entry);
      runs[i]!.push(run);
      const load = loadavg()[0]!.toFixed(2);
      console.log(`RSS before any client: ${run.mib.toFixed(1)} MiB, ${run.threads} threads (${entry}, round ${round + 1}, load average ${load})`);
    }
  }
  if (rounds === 1 && entries.length === 1) return;
  for (const [i, entry] of entries.entries()) {
    const mibs = runs[i]!.map((run) => run.mib);
    console.log(`${entry}: median ${median(mibs).toFixed(1)} MiB over ${mibs.length} (${mibs.map((m) => m.toFixed(1)).join(', ')})`);
  }
}

void main();

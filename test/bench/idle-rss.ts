/**
 * `node dist/test/bench/idle-rss.js [entry]`: starts a Parley server (dist/src/main.js, or the
 * entry given) on a fresh data directory, waits for /health 200 and a settled RSS, prints it and
 * the process's thread count, and stops it. The footprint scenario's memory half, alone.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parleyEnv } from './bench-server';
import { settledRssMib } from './footprint';

async function main(): Promise<void> {
  const entry = resolve(process.argv[2] ?? join(__dirname, '..', '..', 'src', 'main.js'));
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
    const rss = await settledRssMib(child.pid!);
    console.log(`RSS before any client: ${rss.toFixed(1)} MiB, ${readdirSync(`/proc/${child.pid}/task`).length} threads`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main();

/**
 * Where a data directory's bytes per message go, table by table and index by index: the
 * footprint scenario's short messages (footprint.ts) sent to a server of the given build, then
 * SQLite's `dbstat` of every database file in its data directory, before and after, divided by
 * the messages. Used to account for the footprint (issue 23) and to compare two builds.
 *
 *   node dist/test/bench/disk-by-table.js <main.js> [messages (20,000)] [--keep]
 *
 * `--keep` leaves the data directory in place (its path is printed) for a closer look.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { freePort } from '../support/free-port';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { INSTANCE_ID, mintToken, parleyEnv } from './bench-server';
import { benchDiskFootprint, bytesPerMessage } from './footprint';

/** Bytes by table or index (`file: name`), as dbstat counts its pages (unused space included). */
export function bytesByTable(dataDir: string): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const name of readdirSync(dataDir).filter((f) => f.endsWith('.sqlite'))) {
    const db = new Database(join(dataDir, name), { readonly: true, fileMustExist: true });
    try {
      for (const row of db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all() as { name: string; bytes: number }[]) {
        sizes.set(`${name}: ${row.name}`, row.bytes);
      }
    } finally {
      db.close();
    }
  }
  return sizes;
}


async function main(): Promise<void> {
  const [script, count, ...flags] = process.argv.slice(2);
  if (!script) throw new Error('usage: disk-by-table.js <main.js> [messages] [--keep]');
  const messages = Number(count ?? 20_000);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'parley-disk-by-table-'));
  const port = await freePort();
  const proc = spawn(process.execPath, [resolve(script)], {
    env: { ...process.env, ...parleyEnv(dataDir), PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    for (let healthy = false; !healthy; ) {
      healthy = await fetch(`${baseUrl}/health`).then((r) => r.ok, () => false);
      if (!healthy) await new Promise((r) => setTimeout(r, 100));
    }
    let before = new Map<string, number>();
    const disk = await benchDiskFootprint(
      {
        baseUrl,
        pid: proc.pid!,
        dataDir,
        instanceId: INSTANCE_ID,
        token: (claims) => {
          // A sender's first token: the users and the room exist, what follows is the messages' growth.
          if (!claims.su && before.size === 0) before = bytesByTable(dataDir);
          return mintToken(claims);
        },
      },
      messages,
    );
    const after = bytesByTable(dataDir);
    const rows = [...new Set([...before.keys(), ...after.keys()])]
      .map((name) => ({ name, perMessage: ((after.get(name) ?? 0) - (before.get(name) ?? 0)) / messages }))
      .filter((r) => Math.abs(r.perMessage) >= 0.5)
      .sort((a, b) => a.name.localeCompare(b.name));
    const byFile = new Map<string, number>();
    for (const r of rows) {
      const file = r.name.split(':')[0];
      byFile.set(file, (byFile.get(file) ?? 0) + r.perMessage);
      console.log(`${r.perMessage.toFixed(1).padStart(8)}  ${r.name}`);
    }
    for (const [file, bytes] of byFile) console.log(`${bytes.toFixed(1).padStart(8)}  ${file} (pages used by its tables and indexes)`);
    const { all, withoutWal } = bytesPerMessage(disk.messages, disk.after, disk.before);
    console.log(`files: ${withoutWal.toFixed(0)} B per message without WAL, ${all.toFixed(0)} with it; floor ${disk.floorBytesPerMessage.toFixed(0)}`);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    if (flags.includes('--keep')) console.log(`data directory kept: ${dataDir}`);
    else rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}

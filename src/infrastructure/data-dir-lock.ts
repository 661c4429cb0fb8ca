import { closeSync, openSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { openPrivateFileSync } from '../shared/files/private-files';

/** How often the holder touches the lock file, and after how long an untouched one is stale. */
const HEARTBEAT_MS = 5_000;
const STALE_MS = 30_000;

export class DataDirInUseError extends Error {}

/**
 * The embedded server owns its data directory: one `parley.lock` file naming the process.
 * A lock left by a dead process (same host, pid gone; or untouched for 30 s) is taken over at
 * once, which is what lets a restarted server take its predecessor's projection leases
 * without waiting for them to lapse.
 */
export class DataDirLock {
  private constructor(
    private readonly file: string,
    private readonly heartbeat: NodeJS.Timeout,
  ) {}

  static acquire(dataDir: string): DataDirLock {
    const file = join(dataDir, 'parley.lock');
    const me = JSON.stringify({ pid: process.pid, host: hostname(), started_at: new Date().toISOString() });
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openPrivateFileSync(file, 'wx');
        try {
          writeSync(fd, me + '\n');
        } catch (error) {
          // A full disk: leave no empty lock behind.
          rmSync(file, { force: true });
          throw error;
        } finally {
          closeSync(fd);
        }
        const heartbeat = setInterval(() => {
          try {
            const now = new Date();
            utimesSync(file, now, now);
          } catch {
            /* the directory may be unwritable for a moment; the next beat tries again */
          }
        }, HEARTBEAT_MS);
        heartbeat.unref();
        return new DataDirLock(file, heartbeat);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = readHolder(file);
        if (holder && isAlive(holder, file)) {
          throw new DataDirInUseError(
            `DATA_DIR ${dataDir} is in use by another Parley process (pid ${holder.pid} on ${holder.host}); ` +
              'stop it first, or give this one its own DATA_DIR',
          );
        }
        rmSync(file, { force: true }); // left by a process that died
      }
    }
    throw new DataDirInUseError(`Could not lock DATA_DIR ${dataDir}: another process keeps taking it`);
  }

  release(): void {
    clearInterval(this.heartbeat);
    try {
      const holder = readHolder(this.file);
      if (holder?.pid === process.pid && holder.host === hostname()) rmSync(this.file, { force: true });
    } catch {
      /* already gone */
    }
  }
}

interface Holder {
  readonly pid: number;
  readonly host: string;
}

function readHolder(file: string): Holder | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Holder;
    return typeof parsed.pid === 'number' ? parsed : null;
  } catch {
    return null; // half-written or unreadable: treat as stale
  }
}

function isAlive(holder: Holder, file: string): boolean {
  if (holder.host === hostname()) {
    if (holder.pid === process.pid) return false; // a container restarted with the same pid
    try {
      process.kill(holder.pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
  // Another host (a shared volume): alive while it keeps touching the file.
  try {
    const { mtimeMs } = statSync(file);
    return Date.now() - mtimeMs < STALE_MS;
  } catch {
    return false;
  }
}

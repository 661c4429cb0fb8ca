import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * A fresh export of an instance of the embedded data directory, by the built CLI (dist/) beside
 * a running server, into a new temporary folder: what an operator hands out. The caller removes
 * `join(folder, '..')` when done.
 */
export function freshExport(dataDir: string, instanceId: string): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'parley-fresh-export-')), 'export');
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const name of ['MASTER_KEY', 'EVENTSTORE_CONNECTION_STRING', 'MONGODB_URI', 'INSTANCE_LOCATOR', 'INSTANCE_KEY']) delete env[name];
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/cli/export.js'), instanceId, '--out', out], { env, cwd: ROOT });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`export exited with ${code}: ${stderr}`)))),
  );
}

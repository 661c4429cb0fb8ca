import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * A fresh export of one instance by the built CLI (`dist/src/cli/export.js`), run beside a
 * server on `dataDir` as an operator would: what a byte scan of "every export" reads. Remove
 * the folder with `remove()`.
 */
export function freshExport(dataDir: string, instanceId: string): Promise<{ readonly folder: string; remove(): void }> {
  const parent = mkdtempSync(join(tmpdir(), 'parley-export-'));
  const folder = join(parent, 'export');
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  for (const name of ['MASTER_KEY', 'EVENTSTORE_CONNECTION_STRING', 'MONGODB_URI', 'INSTANCE_LOCATOR', 'INSTANCE_KEY']) delete env[name];
  const child = spawn(process.execPath, [join(ROOT, 'dist/src/cli/export.js'), instanceId, '--out', folder], { env, cwd: ROOT });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve({ folder, remove: () => rmSync(parent, { recursive: true, force: true }) }) : reject(new Error(`export exited with ${code}: ${stderr}`)),
    ),
  );
}

/** Every file under `folder` as text, by its path. */
export function folderTexts(folder: string): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) texts[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  }
  return texts;
}

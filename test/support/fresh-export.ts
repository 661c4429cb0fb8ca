import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './cli-process';

/**
 * A fresh export of one instance by the built CLI (`dist/src/cli/export.js`), run beside a
 * server on `dataDir` as an operator would: what a byte scan of "every export" reads. Remove
 * the folder with `remove()`.
 */
export async function freshExport(dataDir: string, instanceId: string): Promise<{ readonly folder: string; remove(): void }> {
  const parent = mkdtempSync(join(tmpdir(), 'parley-export-'));
  const folder = join(parent, 'export');
  const exit = await runCli('export', [instanceId, '--out', folder], { DATA_DIR: dataDir });
  if (exit.code !== 0) throw new Error(`export exited with ${exit.code ?? exit.signal}: ${exit.stderr}`);
  return { folder, remove: () => rmSync(parent, { recursive: true, force: true }) };
}

/** Every file under `folder` as text, by its path. */
export function folderTexts(folder: string): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) texts[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  }
  return texts;
}

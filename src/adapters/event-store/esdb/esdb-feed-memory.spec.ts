import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');
/** Built by `npm test` (npm run build) before jest runs. */
const SCRIPT = join(ROOT, 'dist', 'test', 'support', 'esdb-feed-heap.js');

/**
 * A live subscription runs for the life of a process (the projector worker's, each API
 * process's live log): what it has delivered must not stay in memory. Measured in a process of
 * its own with `--expose-gc`, so that nothing else shares the heap.
 */
describe('EventStoreDB subscriptions', () => {
  it('keep nothing of the events they delivered: 100,000 events of 1 KB grow the heap by less than 16 MB', async () => {
    expect(existsSync(SCRIPT)).toBe(true); // else: npm run build
    const child = spawn(process.execPath, ['--expose-gc', SCRIPT, '100000'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, err }).toEqual({ code: 0, err: '' });
    const { seen, grownBytes } = JSON.parse(out) as { seen: number; grownBytes: number };
    expect(seen).toBe(100_000);
    expect(grownBytes).toBeLessThan(16 * 1024 * 1024);
  });
});

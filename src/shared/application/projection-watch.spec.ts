import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { ALL_PROJECTIONS } from '../../../projections';
import { checkpointName } from '../../../projections/projection';
import { LogPosition } from '../domain/event';
import { DomainError } from '../domain/errors';
import { ProjectionWatch } from './projection-watch';

const pos = (i: number): LogPosition => String(i).padStart(20, '0');
const ALL = ALL_PROJECTIONS.map(checkpointName);

/** The real store, counting how stored checkpoints are read (to show the cost of a poll, not to mock). */
class CountingCheckpoints extends SqliteReadModelStore {
  single = 0;
  batched: string[][] = [];
  override async getCheckpoint(projection: string) {
    this.single++;
    return super.getCheckpoint(projection);
  }
  override async getCheckpoints(projections: readonly string[]) {
    this.batched.push([...projections]);
    return super.getCheckpoints(projections);
  }
}

const eventually = async (check: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within 10 s: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** How a wait ended: `resolved`, or the error's reason and description. */
const outcome = (wait: Promise<void>) =>
  wait.then(
    () => 'resolved',
    (error: unknown) => (error instanceof DomainError ? `${error.reason}: ${error.description}` : String(error)),
  );

describe('ProjectionWatch in a process that folds nothing itself (an API process beside workers)', () => {
  let dir: string;
  let store: CountingCheckpoints;
  const watches: ProjectionWatch[] = [];
  const watch = (timeoutMs = 600_000) => {
    const w = new ProjectionWatch(store, ALL, null, timeoutMs, 10);
    watches.push(w);
    return w;
  };
  const moveAll = (to: LogPosition) => store.applyBatch([], Object.fromEntries(ALL.map((n) => [n, to])));

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-watch-'));
    store = new CountingCheckpoints(join(dir, 'read-models.sqlite'));
  });
  afterEach(async () => {
    for (const w of watches.splice(0)) w.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads every stored checkpoint in one query per poll, however many projections and waits', async () => {
    await moveAll(pos(1));
    const w = watch();
    const waits = [w.waitFor(pos(5)), w.waitFor(pos(5)), w.waitFor(pos(3), ['users_v1'])];
    await eventually(() => store.batched.length + store.single >= 5, 'a few polls');
    await moveAll(pos(5));
    expect(await Promise.all(waits.map(outcome))).toEqual(['resolved', 'resolved', 'resolved']);
    expect(store.single).toBe(0);
    for (const names of store.batched) expect(names.sort()).toEqual([...ALL].sort());
  });
});

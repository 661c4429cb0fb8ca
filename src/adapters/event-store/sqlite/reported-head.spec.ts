import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordedEvent } from '../../../shared/domain/event';
import { EventToAppend } from '../../../shared/ports/event-store.port';
import { ReportedHead, SqliteEventStore } from './sqlite-event-store';
import { eventually, sleep } from '../../../../test/support/waiting';

/**
 * A second connection reading the log the first one writes (the embedded server's projector
 * thread): it sees only what the writer reported on disk, and the report wakes it at once.
 */
type Done = (error: NodeJS.ErrnoException | null) => void;

const event = (n: number): EventToAppend => ({ type: 'Counted', data: { n }, metadata: { occurred_at: '2026-01-01T00:00:00.000Z' } });

describe('SqliteEventStore reading up to the head its writer reports', () => {
  let dir: string;
  let writer: SqliteEventStore;
  let reader: SqliteEventStore;
  let held: Done[];
  let heads: number[];
  let stopWatching: () => void;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-reported-head-'));
    held = [];
    heads = [];
    const file = join(dir, 'events.sqlite');
    writer = new SqliteEventStore(file, {
      walFlush: { fdatasync: (fd, done) => void held.push((error) => (error ? done(error) : fdatasync(fd, done))), fdatasyncSync: () => undefined },
    });
    const listeners = new Set<() => void>();
    let through = 0;
    const head: ReportedHead = {
      get through() {
        return through;
      },
      onMoved: (listener) => (listeners.add(listener), () => listeners.delete(listener)),
    };
    stopWatching = writer.watchVisibleHead((moved) => {
      heads.push((through = moved));
      for (const listener of listeners) listener();
    });
    // Polling for other processes' commits once a minute: whatever the reader sees sooner came from the report.
    reader = new SqliteEventStore(file, { reportedHead: head, pollMs: 60_000 });
  });
  afterEach(async () => {
    stopWatching();
    for (const done of held.splice(0)) done(null);
    await reader.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('never returns a commit its writer has not put on disk, and follows the report at once', async () => {
    const subscription = reader.subscribeToAll();
    const seen: RecordedEvent[] = [];
    const consuming = (async () => {
      for await (const e of subscription) seen.push(e);
    })();
    const appended = writer.append('count-a', [event(1), event(2)], 'no_stream');
    await eventually(() => held.length === 1);
    // Committed in the file (the writer's command reads see it), but not on disk: the reader sees nothing of it.
    expect(await writer.readStream('count-a')).toHaveLength(2);
    expect(await reader.readAll()).toEqual([]);
    expect(await reader.readStream('count-a')).toEqual([]);
    expect(await reader.headPosition()).toBeNull();
    await sleep(50);
    expect(seen).toEqual([]);

    held.shift()!(null);
    const { position } = await appended;
    await eventually(() => seen.length === 2, { what: 'the subscription woken by the report (its poll is a minute away)' });
    expect(heads.at(-1)).toBe(Number(position));
    expect(await reader.headPosition()).toBe(position);
    expect((await reader.readAll()).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
    await subscription.close();
    await consuming;
  });

  it('appends nothing itself', async () => {
    await expect(reader.append('count-b', [event(1)], 'no_stream')).rejects.toThrow(/appends nothing/);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventToAppend } from '../../../shared/ports/event-store.port';
import { SqliteEventStore } from './sqlite-event-store';

/**
 * Whether another writer appended (the admin CLI or an import beside the embedded server): the
 * server's keyed requests wait for the whole log's head only then (IdempotentRequests).
 */
const event = (n: number): EventToAppend => ({ type: 'Counted', data: { n }, metadata: { occurred_at: '2026-01-01T00:00:00.000Z' } });

describe('SqliteEventStore.appendedElsewhere', () => {
  let dir: string;
  let server: SqliteEventStore;
  let cli: SqliteEventStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'parley-appended-elsewhere-'));
    const file = join(dir, 'events.sqlite');
    server = new SqliteEventStore(file);
    cli = new SqliteEventStore(file);
  });
  afterEach(async () => {
    await cli.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  // It may also say yes after the checkpoint thread's checkpoint (another connection): never no after another writer's append.
  it("says yes after another connection's append, every time, whatever came between", async () => {
    for (let n = 0; n < 20; n++) {
      await server.append('count-a', [event(n)], n === 0 ? 'no_stream' : n - 1);
      server.appendedElsewhere();
      await cli.append(`count-b-${n}`, [event(n)], 'no_stream');
      expect(server.appendedElsewhere()).toBe(true);
    }
  });

  it('says yes when closed (nothing can be known)', async () => {
    await server.close();
    expect(server.appendedElsewhere()).toBe(true);
  });
});

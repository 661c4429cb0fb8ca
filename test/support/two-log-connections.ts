import { afterEach, beforeEach } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { EventToAppend } from '../../src/shared/ports/event-store.port';

/** A small event for appends whose content does not matter. */
export const countedEvent = (n: number): EventToAppend => ({ type: 'Counted', data: { n }, metadata: { occurred_at: '2026-01-01T00:00:00.000Z' } });

/**
 * Two stores on one fresh events.sqlite, made before and closed after each test of the calling
 * `describe`: the server's and another connection's (the admin CLI, an import beside the server).
 */
export function twoLogConnections(prefix: string): { readonly server: () => SqliteEventStore; readonly cli: () => SqliteEventStore } {
  let dir: string;
  let server: SqliteEventStore;
  let cli: SqliteEventStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    const file = join(dir, 'events.sqlite');
    server = new SqliteEventStore(file);
    cli = new SqliteEventStore(file);
  });
  afterEach(async () => {
    await cli.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { server: () => server, cli: () => cli };
}

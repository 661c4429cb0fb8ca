import { BACKWARDS, END, EventStoreDBClient, jsonEvent, NO_STREAM, StreamDeletedError, StreamNotFoundError, WrongExpectedVersionError } from '@eventstore/db-client';
import { LayoutMigration, LayoutVersionRecord, LayoutVersions, migrateLayout } from '../../shared/layout-versions';
import { appendUnbatched, withTimeout } from '../../shared/esdb-client';

/**
 * Where the layout version is kept: the metadata of the stream `parley-layout` (its metastream
 * `$$parley-layout`, which holds nothing else). Readers of the log never see it: like every
 * `$…` stream it is not an application event (see isApplicationEvent), for this release and the
 * ones before it.
 */
export const LAYOUT_METASTREAM = '$$parley-layout';
const TIMEOUT_MS = 10_000;

/** The layout of Parley's streams in EventStoreDB, one step per version (see LayoutMigration). */
export const ESDB_LAYOUT_MIGRATIONS: readonly LayoutMigration[] = [
  {
    version: 1,
    description:
      'one stream per aggregate named <category>-<instance>.<id>, JSON events with Parley metadata, typing and presence signals in ephemeral-<id> streams (the layout before versions were recorded)',
    up: async () => undefined,
  },
];

interface Recorded {
  readonly version: number;
  /** The metastream's last revision, null when it has none. */
  readonly revision: bigint | null;
}

/** The layout version of Parley's streams on one EventStoreDB (kept in `metastream`: another one only in tests). */
export function esdbLayoutRecord(client: EventStoreDBClient, metastream = LAYOUT_METASTREAM): LayoutVersionRecord {
  const recorded = async (): Promise<Recorded> => {
    try {
      const read = client.readStream(metastream, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
      const [last] = await withTimeout(read.toArray(), TIMEOUT_MS, `a read of ${metastream}`);
      if (!last?.event) return { version: 0, revision: null };
      const data = last.event.data as { parleyLayoutVersion?: unknown };
      return { version: Number(data?.parleyLayoutVersion ?? 0), revision: last.event.revision };
    } catch (error) {
      if (error instanceof StreamNotFoundError || error instanceof StreamDeletedError) return { version: 0, revision: null };
      throw error;
    }
  };
  return {
    name: 'EventStoreDB streams (EVENTSTORE_CONNECTION_STRING)',
    read: async () => (await recorded()).version,
    write: async (from, to) => {
      const now = await recorded();
      if (now.version !== from) return false;
      try {
        await appendUnbatched(client, metastream, [jsonEvent({ type: '$metadata', data: { parleyLayoutVersion: to } })], {
          expectedRevision: now.revision === null ? NO_STREAM : now.revision,
          deadline: TIMEOUT_MS,
        });
        return true;
      } catch (error) {
        if (error instanceof WrongExpectedVersionError) return false;
        throw error;
      }
    },
  };
}

/** Checks, and brings forward, the layout of Parley's streams: at the start of every process that uses EventStoreDB. */
export function migrateEsdbLayout(client: EventStoreDBClient, migrations: readonly LayoutMigration[] = ESDB_LAYOUT_MIGRATIONS): Promise<LayoutVersions> {
  return migrateLayout(esdbLayoutRecord(client), migrations);
}

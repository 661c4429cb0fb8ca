import { Filter, JSONType, RecordedEvent as EsdbRecordedEvent, eventTypeFilter, jsonEvent, streamNameFilter } from '@eventstore/db-client';
import { EventMetadata, LogPosition, RecordedEvent } from '../../../shared/domain/event';
import { EventToAppend, LogFilter, newEventId } from '../../../shared/ports/event-store.port';
import { EPHEMERAL_STREAM_PREFIX } from '../../ephemeral/esdb-ephemeral-bus';
import { knownPosition } from './esdb-positions';

/** The port's events as EventStoreDB's, and back; which of the server's events the log's readers see. */

/**
 * EventStoreDB sets an event's `created` time itself: a time given to an append (an import
 * keeping the original) travels in the metadata under this key and is read back as `recordedAt`.
 */
const RECORDED_AT_KEY = 'parley_recorded_at';

/** An event to append as the client's JSON event. */
export const toEventData = (e: EventToAppend) =>
  jsonEvent({
    id: e.id ?? newEventId(),
    type: e.type,
    // The client JSON-encodes whatever it is given; the casts only satisfy its narrower types.
    data: (e.data ?? null) as JSONType,
    metadata: (e.recordedAt === undefined ? (e.metadata ?? {}) : { ...e.metadata, [RECORDED_AT_KEY]: e.recordedAt }) as unknown as JSONType,
  });

export function toRecorded(e: EsdbRecordedEvent, position?: LogPosition): RecordedEvent {
  const stored = (e.metadata && !(e.metadata instanceof Uint8Array) && typeof e.metadata === 'object' ? e.metadata : {}) as Record<string, unknown>;
  const { [RECORDED_AT_KEY]: givenRecordedAt, ...metadata } = stored;
  return {
    id: e.id,
    streamName: e.streamId,
    revision: Number(e.revision),
    // Servers before 22.6 (refused at connect) report no position for stream reads.
    position: position ?? knownPosition(e.position) ?? '',
    type: e.type,
    data: e.data,
    metadata: metadata as EventMetadata,
    recordedAt: typeof givenRecordedAt === 'string' ? givenRecordedAt : e.created.toISOString(),
  };
}

/**
 * What the log means to its readers (projectors, the live log, rebuilds, audits): neither
 * EventStoreDB's own events and streams (`$…`) nor the typing and presence signals that the
 * ephemeral bus writes to the same server (`ephemeral-…` streams, dropped by the server after
 * their max age). readAll, headPosition and both subscriptions pass every event through here.
 */
export const isApplicationEvent = (e: EsdbRecordedEvent): boolean =>
  !e.type.startsWith('$') && !e.streamId.startsWith('$') && !e.streamId.startsWith(EPHEMERAL_STREAM_PREFIX);

/** The exact semantics of LogFilter, applied here even when the server filtered already. */
export function compileFilter(filter: LogFilter | undefined): (e: EsdbRecordedEvent) => boolean {
  const types = filter?.eventTypes?.length ? new Set(filter.eventTypes) : null;
  const prefixes = filter?.streamPrefixes?.length ? filter.streamPrefixes : null;
  return (e) => (!types || types.has(e.type)) && (!prefixes || prefixes.some((p) => e.streamId.startsWith(p)));
}

/**
 * The server filters on one thing only: stream prefixes when given (the other condition is
 * checked here), else exact event types by regex, else stream names that are neither system
 * (`$…`) nor ephemeral signal streams, so a busy typing channel costs the readers nothing.
 * Whatever the server lets through is checked again by isApplicationEvent and the filter.
 */
export function serverFilter(filter: LogFilter | undefined): Filter {
  if (filter?.streamPrefixes?.length) return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  if (filter?.eventTypes?.length) {
    return eventTypeFilter({ regex: `^(?:${filter.eventTypes.map(escapeRegex).join('|')})$` });
  }
  return streamNameFilter({ regex: `^(?!\\$|${escapeRegex(EPHEMERAL_STREAM_PREFIX)})` });
}

/** Escapes .NET regex metacharacters (whitespace is literal without IgnorePatternWhitespace). */
const escapeRegex = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|#]/g, (c) => `\\${c}`);

import type { RecordedEvent as EsdbRecordedEvent } from '@eventstore/db-client';
import { compileFilter, isApplicationEvent, toEventData, toRecorded } from './esdb-records';
import { esdbPosition, ForeignLogPositionError, isEsdbPosition, knownPosition, parseEsdbPosition } from './esdb-positions';

/** An event as the client reads it back from the server. */
const stored = (fields: Partial<EsdbRecordedEvent> & Pick<EsdbRecordedEvent, 'streamId' | 'type'>): EsdbRecordedEvent =>
  ({
    id: 'e1',
    revision: 3n,
    data: {},
    metadata: {},
    isJson: true,
    created: new Date('2026-11-01T10:00:00.000Z'),
    position: { commit: 10n, prepare: 9n },
    ...fields,
  }) as EsdbRecordedEvent;

describe('EventStoreDB log positions', () => {
  it('are strings in log order that read back as the same position', () => {
    const positions = [
      { commit: 9n, prepare: 9n },
      { commit: 10n, prepare: 2n },
      { commit: 10n, prepare: 10n },
      { commit: 2n ** 64n - 2n, prepare: 0n },
    ];
    const strings = positions.map(esdbPosition);
    expect([...strings].sort()).toEqual(strings);
    expect(strings.map(parseEsdbPosition)).toEqual(positions);
    expect(strings.every(isEsdbPosition)).toBe(true);
  });

  it('refuse a position of another log with how to rebuild', () => {
    const sqlitePosition = '00000000000000000042';
    expect(isEsdbPosition(sqlitePosition)).toBe(false);
    expect(() => parseEsdbPosition(sqlitePosition)).toThrow(ForeignLogPositionError);
    expect(() => parseEsdbPosition(sqlitePosition)).toThrow(/npm run rebuild/);
  });

  it('count the "no position" older servers report for stream reads as none', () => {
    expect(knownPosition({ commit: 2n ** 64n - 1n, prepare: 2n ** 64n - 1n })).toBeUndefined();
    expect(knownPosition(undefined)).toBeUndefined();
    expect(knownPosition({ commit: 1n, prepare: 1n })).toBe(esdbPosition({ commit: 1n, prepare: 1n }));
  });
});

describe('EventStoreDB records', () => {
  it('keep a given recording time through the metadata, and read it back out of it', () => {
    const data = toEventData({ id: 'e1', type: 'MessageSent', data: { text: 'hi' }, metadata: { actor: { user_id: 'alice' }, occurred_at: '2020-01-01T00:00:00.000Z' }, recordedAt: '2020-01-01T00:00:00.000Z' });
    const read = toRecorded(stored({ streamId: 'room-1', type: data.type, data: data.data, metadata: data.metadata as Record<string, unknown> }));
    expect(read).toEqual({
      id: 'e1',
      streamName: 'room-1',
      revision: 3,
      position: esdbPosition({ commit: 10n, prepare: 9n }),
      type: 'MessageSent',
      data: { text: 'hi' },
      metadata: { actor: { user_id: 'alice' }, occurred_at: '2020-01-01T00:00:00.000Z' },
      recordedAt: '2020-01-01T00:00:00.000Z',
    });
    // Without one, the server's own time.
    expect(toRecorded(stored({ streamId: 'room-1', type: 'MessageSent' })).recordedAt).toBe('2026-11-01T10:00:00.000Z');
  });

  it('show readers neither the server’s own events nor the ephemeral bus’s signals', () => {
    expect(isApplicationEvent(stored({ streamId: 'room-1', type: 'MessageSent' }))).toBe(true);
    expect(isApplicationEvent(stored({ streamId: '$stats-0.0.0.0:2113', type: '$statsCollected' }))).toBe(false);
    expect(isApplicationEvent(stored({ streamId: 'room-1', type: '$metadata' }))).toBe(false);
    expect(isApplicationEvent(stored({ streamId: 'ephemeral-typing-i-r', type: 'Signal' }))).toBe(false);
  });

  it('match a log filter on both event types and stream prefixes', () => {
    const matches = compileFilter({ eventTypes: ['MessageSent'], streamPrefixes: ['room-', 'timeline-'] });
    expect(matches(stored({ streamId: 'room-1', type: 'MessageSent' }))).toBe(true);
    expect(matches(stored({ streamId: 'user-1', type: 'MessageSent' }))).toBe(false);
    expect(matches(stored({ streamId: 'room-1', type: 'RoomCreated' }))).toBe(false);
    expect(compileFilter(undefined)(stored({ streamId: 'anything', type: 'Any' }))).toBe(true);
  });
});

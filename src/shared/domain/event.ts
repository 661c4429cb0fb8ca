/**
 * Events are plain records, never classes: `type` is a permanent, explicit name and
 * `data` only ever gains optional fields (see docs/architecture.md "Versioned events").
 */
export interface DomainEvent<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: Data;
}

/** Who caused an event and when; stored beside it in the log for the audit trail. */
export interface EventMetadata {
  readonly instance_id?: string;
  readonly actor?: Actor;
  readonly occurred_at: string;
  readonly [extra: string]: unknown;
}

export interface Actor {
  /** The user the token acts for (`sub`), when there is one. */
  readonly user_id?: string;
  /** The instance key that signed the token, or `cli`/`bootstrap` for operator actions. */
  readonly key_id?: string;
  readonly su?: boolean;
  /**
   * The operator who acted through the console (docs/console.md): the `console_user` claim of an
   * instance key's token, or the name on a deployment token (then `key_id` is `console`).
   */
  readonly console_user?: string;
}

/**
 * A position in the whole log. Opaque, but ordered: every adapter formats positions as
 * fixed-width strings, so `a < b` compares them (and they sort in MongoDB and SQLite).
 */
export type LogPosition = string;

/** Where and when the log holds an event. */
export interface RecordedEnvelope {
  readonly id: string;
  readonly streamName: string;
  /** 0 for a stream's first event, in every adapter. */
  readonly revision: number;
  readonly position: LogPosition;
  readonly metadata: EventMetadata;
  readonly recordedAt: string;
}

/**
 * An event as the log holds it. Over a union of events it is a union of recorded events, one
 * per type, so checking `type` narrows `data` (`RecordedEvent<MessageSent | RoomDeleted>`).
 */
export type RecordedEvent<E extends DomainEvent = DomainEvent> = E & RecordedEnvelope;

export const positionAfter = (a: LogPosition, b: LogPosition | null | undefined): boolean => b == null || a > b;

/** The leading counter of a position (in positionUnit), for lag and progress only. */
export const positionMagnitude = (p: LogPosition | null | undefined): number =>
  p ? Number(p.split(':')[0]) : 0;

/**
 * What positionMagnitude counts: events where positions number them (SQLite), bytes of log
 * where positions are offsets in it (EventStoreDB's `commit:prepare`), so that a lag is
 * reported in what it measures.
 */
export type PositionUnit = 'events' | 'log_bytes';
export const positionUnit = (p: LogPosition | null | undefined): PositionUnit => (p?.includes(':') ? 'log_bytes' : 'events');

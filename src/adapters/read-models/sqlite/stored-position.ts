import { LogPosition } from '../../../shared/domain/event';

/**
 * How a collection's table holds the log position each document reflects (its `position`
 * column). Tables made before positions were compact hold the position's text (`TEXT`); those
 * made since (`BLOB`: no type affinity, a value kept as it is bound) hold the SQLite log's
 * positions, twenty digits, as the integer they spell (3 or 4 bytes instead of 20), and any
 * other position (EventStoreDB's `commit:prepare`) as its text. A table only ever holds the
 * positions of one log, so its values are all of one kind and compare as the positions do.
 */
export interface PositionCodec {
  /** The declared type of the column (what `positionsOfColumn` reads back). */
  readonly sqlType: string;
  /** A position as the column holds it. */
  stored(position: LogPosition): unknown;
  /** A position as the column held it. */
  position(stored: unknown): LogPosition;
}

export const TEXT_POSITIONS: PositionCodec = {
  sqlType: 'TEXT',
  stored: (position) => position,
  position: (stored) => stored as LogPosition,
};

/** Twenty digits, the first five zeros: a whole number below 10^15, exact as a JavaScript number. */
const COMPACT = /^00000\d{15}$/;
const WIDTH = 20;

export const COMPACT_POSITIONS: PositionCodec = {
  sqlType: 'BLOB',
  stored: (position) => (COMPACT.test(position) ? BigInt(position) : position),
  position: (stored) => (typeof stored === 'number' ? String(stored).padStart(WIDTH, '0') : (stored as LogPosition)),
};

/** The codec of a table's `position` column, by its declared type. */
export const positionsOfColumn = (declared: string): PositionCodec => (declared.toUpperCase() === COMPACT_POSITIONS.sqlType ? COMPACT_POSITIONS : TEXT_POSITIONS);

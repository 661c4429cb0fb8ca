import { LogPosition } from '../../../shared/domain/event';

/** Digits of a log position: positions compare as strings in the order of the log. */
export const POSITION_WIDTH = 20;

/** The port's position of an event at this row (`position` column). */
export const sqlitePosition = (seq: number): LogPosition => String(seq).padStart(POSITION_WIDTH, '0');

/** The row of a port's position; 0 (before the first event) for none. */
export const seqOf = (p: LogPosition | null | undefined): number => (p ? Number(p) : 0);

/** Whether a position is one of this log's: POSITION_WIDTH digits, as sqlitePosition writes them (EventStoreDB's are `commit:prepare`). */
export const isSqlitePosition = (p: LogPosition): boolean => p.length === POSITION_WIDTH && /^[0-9]+$/.test(p);

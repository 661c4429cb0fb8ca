import type { Position } from '@eventstore/db-client';
import { LogPosition } from '../../../shared/domain/event';

/** EventStoreDB's log positions as the port's: strings whose order is log order. */

const WIDTH = 20; // a u64 has at most 20 decimal digits
const ESDB_POSITION = /^(\d{20}):(\d{20})$/;

/** `commit:prepare`, each zero-padded to 20 digits, so that string order is log order. */
export const esdbPosition = (p: Position): LogPosition =>
  `${p.commit.toString().padStart(WIDTH, '0')}:${p.prepare.toString().padStart(WIDTH, '0')}`;

/** Whether `position` is one of an EventStoreDB log (rather than, say, a SQLite log's). */
export const isEsdbPosition = (position: LogPosition): boolean => ESDB_POSITION.test(position);

/**
 * A position this log cannot resume from: a checkpoint of read models folded from another event
 * log (a SQLite log's positions are 20 digits without a colon).
 */
export class ForeignLogPositionError extends Error {
  constructor(position: LogPosition) {
    super(
      `${JSON.stringify(position)} is not a position of an EventStoreDB log: the read models were folded from another event log. ` +
        'Rebuild them from this one (stop the API processes and projector workers, then npm run rebuild).',
    );
    this.name = 'ForeignLogPositionError';
  }
}

export const parseEsdbPosition = (position: LogPosition): Position => {
  const match = ESDB_POSITION.exec(position);
  if (!match) throw new ForeignLogPositionError(position);
  return { commit: BigInt(match[1]), prepare: BigInt(match[2]) };
};

/** What servers before 22.6 send as the position of an event read from a stream: no position. */
const NO_POSITION = 2n ** 64n - 1n;

/** A reported position, unless it is the "no position" of older servers (or absent). */
export const knownPosition = (p: Position | undefined): LogPosition | undefined =>
  p && p.commit !== NO_POSITION && p.prepare !== NO_POSITION ? esdbPosition(p) : undefined;

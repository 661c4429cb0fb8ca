import { LogPosition } from '../../domain/event';
import { DomainError } from '../../domain/errors';

/**
 * The projections a wait is for: named by checkpoint (`<name>_v<version>`), or those that
 * fold any of the event types a write appended (`folding`: the read models it changed).
 */
export type AwaitedProjections = readonly string[] | { readonly folding: readonly string[] };

/** Lets a write answer only once the read models reflect it. */
export interface ReadYourWrites {
  /**
   * Resolves once the projections awaited (every projection when omitted) have folded the log
   * up to `position`. Bounded in every deployment: past READ_YOUR_WRITES_TIMEOUT_MS it rejects
   * with `projectionLagError`; at once with `projectionParkedError` when one of them is parked
   * short of `position` (it will not get there by itself).
   */
  waitFor(position: LogPosition, projections?: AwaitedProjections): Promise<void>;
  /**
   * Whether this process folds every one of `projections` now (its projectors hold them, none
   * parked): a write may then leave the wait for them to their readers (`RunOptions.readersWait`,
   * `leftToReaders`, readAfterWrites). Absent: never.
   */
  foldsHere?(projections: readonly string[]): boolean;
  /** A write answered at `position` without waiting for `projections` (foldsHere): their readers wait for it (`readersCaughtUp`). */
  leftToReaders?(position: LogPosition, projections: readonly string[]): void;
  /**
   * Resolves once `projections` have folded every write left to their readers so far
   * (`leftToReaders`); at once when none was, or when one of them is parked short of it (it would
   * not get there by itself: the read shows what it holds, as reads of a parked projection do).
   * Past READ_YOUR_WRITES_TIMEOUT_MS it rejects with `projectionLagError`.
   */
  readersCaughtUp?(projections: readonly string[]): Promise<void>;
}

export const READ_YOUR_WRITES = Symbol('ReadYourWrites');

export const projectionLagError = (timeoutMs: number) =>
  new DomainError(
    'unavailable',
    'projection_lag',
    `The change was saved, but the read models did not reflect it within ${timeoutMs} ms; retry the read shortly`,
  );

/** The wait ended because the process is stopping: saved, not yet shown, and no timeout involved. */
export const stoppedBeforeProjectedError = () =>
  new DomainError(
    'unavailable',
    'projection_lag',
    'The change was saved, but the server stopped before the read models reflected it; do not send it again, read it back shortly',
  );

/**
 * A projection the answer reads stopped on an event it cannot fold (parked, see /health): the
 * change is saved, and shows once an operator has repaired the projection; waiting longer would
 * not change the answer.
 */
export const projectionParkedError = (projections: readonly string[]) =>
  new DomainError(
    'unavailable',
    'projection_lag',
    `The change was saved, but it is not yet readable: ${projections.length === 1 ? 'projection' : 'projections'} ${projections.join(', ')} ` +
      `stopped on an event ${projections.length === 1 ? 'it' : 'they'} cannot fold (see /health) and ${projections.length === 1 ? 'shows' : 'show'} ` +
      'nothing newer until repaired; do not send it again',
  );

import { LogPosition } from '../domain/event';
import { DomainError } from '../domain/errors';

/** Lets a write answer only once the read models reflect it. */
export interface ReadYourWrites {
  /**
   * Resolves once the named projections (checkpoint names `<name>_v<version>`; every
   * projection when omitted) have folded the log up to `position`. Bounded in every
   * deployment: past READ_YOUR_WRITES_TIMEOUT_MS it rejects with `projectionLagError`.
   */
  waitFor(position: LogPosition, projections?: readonly string[]): Promise<void>;
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

import { LogPosition } from '../domain/event';
import { DomainError } from '../domain/errors';

/** Lets a write answer only once the read models reflect it. */
export interface ReadYourWrites {
  waitFor(position: LogPosition): Promise<void>;
}

export const READ_YOUR_WRITES = Symbol('ReadYourWrites');

export const projectionLagError = (timeoutMs: number) =>
  new DomainError(
    'unavailable',
    'projection_lag',
    `The change was saved, but the read models did not reflect it within ${timeoutMs} ms; retry the read shortly`,
  );

import type { LogPosition } from '../../shared/domain/event';
import type { ProjectorRunnerStats } from '../../shared/application/projection-runtime/projector-runner';
import type { ProjectorThreadConfig } from '../projector-thread/protocol';

/** What a fold thread is started with (plain data: structured clone). */
export interface FoldThreadData {
  readonly config: ProjectorThreadConfig;
  /** The lease owner: the leases are taken already (the rebuild holds them under this owner). */
  readonly owner: string;
  readonly leaseTtlMs: number;
  /** Events read and written per transaction. */
  readonly page: number;
  /** The projections to fold, by checkpoint name (`<name>_v<version>`), of this code base. */
  readonly checkpoints: readonly string[];
}

/** Fold thread → its starter. */
export type FromFoldThread =
  /** Its runner holds every projection and folds. */
  | { readonly kind: 'started' }
  /** A batch written: the projections stand at `position`. */
  | { readonly kind: 'progress'; readonly position: LogPosition }
  /** Every projection folded what was in the log at the start; its stores are closed. */
  | { readonly kind: 'done'; readonly stats: ProjectorRunnerStats }
  | { readonly kind: 'failed'; readonly error: string };

/** Its starter → the fold thread. */
export type ToFoldThread = { readonly kind: 'stop' };

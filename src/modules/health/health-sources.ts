import type { ProjectionStatus } from '../../shared/application/projection-runtime/projector-runner';
import type { LogPosition, RecordedEvent } from '../../shared/domain/event';
import type { Document, StoredLease } from '../../shared/ports/read-model-store.port';
import type { SpaceLeft } from '../../shared/ports/event-store.port';

/** What /health reads, bound by the core module from the process's runtime. */
export interface HealthSources {
  /** This process's projector runner, when it folds projections itself. */
  projectorStatus(): ProjectionStatus[] | null;
  /** `building`: a newer version catching up before reads switch to it; `retired`: an older one no longer read. */
  roleOf(checkpoint: string): 'serving' | 'building' | 'retired';
  /** Every projection's checkpoint name. */
  readonly checkpoints: readonly string[];
  /** Reads the stored checkpoints again and answers a projection's newest known position. */
  refreshPositions(): Promise<(name: string) => LogPosition | null>;
  headPosition(): Promise<LogPosition | null>;
  /** The first event after a position: its age is how far a projection lags in time. */
  firstEventAfter(position: LogPosition | null): Promise<RecordedEvent | null>;
  /** The stored leases of these projections (checkpoint names), expired ones included. */
  leases(names: readonly string[]): Promise<Map<string, StoredLease>>;
  /** Projections parked by any worker (documents of the projector_status collection). */
  parkedProjections(): Promise<Document[]>;
  /** An append failed and none succeeded since, or one failed moments ago (`recent`: a probe cannot clear it). */
  storageFailure(): { readonly error: string; readonly since: number; readonly recent: boolean } | null;
  /** A small write to the read-model store: whether storage accepts writes again. */
  probeStorage(): Promise<void>;
  /** How much more the event log can take (found without writing to it); null: the store cannot tell. */
  eventLogSpaceLeft(): Promise<SpaceLeft | null>;
}

export const HEALTH_SOURCES = Symbol('HealthSources');

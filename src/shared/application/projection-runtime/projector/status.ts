import { LogPosition } from '../../../domain/event';
import { ParkedProjection, RetryingProjection } from './parking';
import { ProjectionRunStats } from './projection-slot';

/** Where one projection stands, for health, logs and read-your-writes. */
export interface ProjectionStatus {
  /** The checkpoint name, `<name>_v<version>`. */
  readonly name: string;
  /**
   * `running`: this runner folds it; `waiting_for_lease`: another process holds it;
   * `dropped`: the runner failed and will resubscribe; `retrying`: an event failed its
   * `evolve`, and the projection alone waits to try it again; `parked`: one event keeps failing
   * it, and the projection stopped alone.
   */
  readonly state: 'running' | 'waiting_for_lease' | 'dropped' | 'retrying' | 'parked';
  /** The last position folded (its checkpoint), null before the first event. */
  readonly position: LogPosition | null;
  readonly error?: string;
  /** The event a parked or retrying projection stopped at. */
  readonly failedEvent?: { readonly position: LogPosition; readonly type: string; readonly stream: string };
  /** `retrying` only: the attempts made at the event, and how many park the projection. */
  readonly attempts?: { readonly made: number; readonly max: number };
}

/** What a runner knows of one projection. */
export interface StatusFacts {
  readonly name: string;
  readonly position: LogPosition | null;
  /** This runner holds its lease. */
  readonly held: boolean;
  /** The runner's drop, while it waits to resubscribe. */
  readonly dropped: string | null;
  readonly parked?: ParkedProjection;
  readonly retrying?: RetryingProjection;
  readonly maxEventAttempts: number;
}

/** A parked projection says so whatever else holds; then a drop; then a retry (of a held one). */
export function projectionStatus(facts: StatusFacts): ProjectionStatus {
  const { name, position, parked, retrying } = facts;
  if (parked) {
    const { event } = parked;
    return {
      name,
      state: 'parked',
      position,
      error: parked.error,
      failedEvent: { position: event.position, type: event.type, stream: event.streamName },
    };
  }
  if (facts.dropped !== null) return { name, state: 'dropped', position, error: facts.dropped };
  if (retrying && facts.held) {
    const { event } = retrying;
    return {
      name,
      state: 'retrying',
      position,
      error: retrying.error,
      failedEvent: { position: event.position, type: event.type, stream: event.streamName },
      attempts: { made: retrying.attempts, max: facts.maxEventAttempts },
    };
  }
  return { name, state: facts.held ? 'running' : 'waiting_for_lease', position };
}

export interface ProjectorRunnerStats {
  /** Events read from the log, whatever their type. */
  readonly eventsRead: number;
  /** By checkpoint name (`<name>_v<version>`). */
  readonly projections: Readonly<Record<string, ProjectionRunStats>>;
}

/** A runner's counts since it started, kept across its claims of leases. */
export class RunCounts {
  private eventsRead = 0;
  private readonly counts = new Map<string, { events: number; documents: number }>();

  /** The counts of one projection, to add to as it folds. */
  of(checkpoint: string): { events: number; documents: number } {
    let c = this.counts.get(checkpoint);
    if (!c) this.counts.set(checkpoint, (c = { events: 0, documents: 0 }));
    return c;
  }

  read(events: number): void {
    this.eventsRead += events;
  }

  stats(): ProjectorRunnerStats {
    const projections: Record<string, ProjectionRunStats> = {};
    for (const [name, c] of this.counts) projections[name] = { ...c };
    return { eventsRead: this.eventsRead, projections };
  }
}

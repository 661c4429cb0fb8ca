import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, ParleyConfig } from '../../config/config';
import { LogPosition, positionMagnitude, RecordedEvent } from '../../shared/domain/event';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { HEALTH_SOURCES, HealthSources } from './health-sources';

export interface ProjectionHealth {
  readonly state: string;
  readonly role?: 'building' | 'retired';
  readonly position: string | null;
  readonly lag_events: number;
  readonly lag_seconds: number;
  readonly error?: string;
  readonly failed_event?: { readonly position: string; readonly type: string; readonly stream?: string };
}

export interface HealthReport {
  readonly status: 'ok' | 'unavailable' | 'starting' | 'stopping';
  /** What is wrong, one sentence each; empty when ready. */
  readonly problems: readonly string[];
  readonly projections: Readonly<Record<string, ProjectionHealth>>;
  readonly live_log: { readonly state: 'following' | 'dropped'; readonly error?: string };
  readonly storage: { readonly state: 'ok' | 'failing'; readonly error?: string };
}

/**
 * Readiness is computed on every call, never set once: the process serves (not starting or
 * stopping), every projection runs and has folded the log to within READINESS_MAX_LAG_MS,
 * the live log follows the log, and storage accepts writes.
 */
@Injectable()
export class Readiness {
  /** The process's lifecycle; `serving` once it listens, `stopping` while it drains. */
  state: 'starting' | 'serving' | 'stopping' = 'starting';

  constructor(
    @Inject(HEALTH_SOURCES) private readonly sources: HealthSources,
    @Inject(CONFIG) private readonly config: ParleyConfig,
    private readonly liveLog: LiveLog,
  ) {}

  async report(): Promise<HealthReport> {
    const problems: string[] = [];
    const projections = await projectionHealth(this.sources);
    for (const [name, health] of Object.entries(projections)) {
      // A version building beside the serving one, or kept after the switch, never makes the process unready.
      const problem = health.role ? null : projectionProblem(name, health.state, health, this.config.readinessMaxLagMs);
      if (problem) problems.push(problem);
    }
    const dropped = this.liveLog.dropped;
    if (dropped) problems.push(`the live log dropped and is resubscribing: ${dropped.error}`);
    let failing = this.sources.storageFailure();
    if (failing) {
      // The last append failed: see whether storage takes writes again before saying so.
      const { error } = failing;
      try {
        await this.sources.probeStorage();
        failing = null;
      } catch {
        problems.push(`storage refuses writes: ${error}`);
      }
    }
    const status = this.state !== 'serving' ? this.state : problems.length ? 'unavailable' : 'ok';
    return {
      status,
      problems,
      projections,
      live_log: dropped ? { state: 'dropped', error: dropped.error } : { state: 'following' },
      storage: failing ? { state: 'failing', error: failing.error } : { state: 'ok' },
    };
  }
}

/**
 * Where every projection version stands now: its state, position and lag behind the head of
 * the log (what /health reports and /metrics exports, in API processes and workers alike).
 */
export async function projectionHealth(sources: HealthSources): Promise<Record<string, ProjectionHealth>> {
  const now = Date.now();
  const [positionOf, head, parkedDocs] = await Promise.all([
    sources.refreshPositions(),
    sources.headPosition(),
    sources.parkedProjections().catch(() => []),
  ]);
  const local = new Map((sources.projectorStatus() ?? []).map((s) => [s.name, s]));
  const parked = new Map(parkedDocs.map((d) => [d._id, d]));
  const projections: Record<string, ProjectionHealth> = {};
  // Projections that keep up stand at the same position: the log is read once per position, not once per projection.
  const firstAfter = new Map<LogPosition | null, Promise<RecordedEvent | null>>();
  for (const name of sources.checkpoints) {
    const position = positionOf(name);
    const lagEvents = Math.max(0, positionMagnitude(head) - positionMagnitude(position));
    let lagSeconds = 0;
    if (lagEvents > 0) {
      if (!firstAfter.has(position)) firstAfter.set(position, sources.firstEventAfter(position).catch(() => null));
      const next = await firstAfter.get(position)!;
      if (next) lagSeconds = Math.max(0, (now - Date.parse(next.recordedAt)) / 1000);
    }
    const mine = local.get(name);
    const parkedDoc = parked.get(name);
    let state = mine?.state ?? 'running_elsewhere';
    let error = mine?.error;
    let failedEvent: ProjectionHealth['failed_event'] = mine?.failedEvent;
    if (!mine && parkedDoc) {
      state = 'parked';
      error = String(parkedDoc.error);
      failedEvent = { position: String(parkedDoc.event_position), type: String(parkedDoc.event_type), stream: String(parkedDoc.event_stream) };
    }
    const role = sources.roleOf(name);
    projections[name] = {
      state,
      ...(role !== 'serving' && { role }),
      position,
      lag_events: lagEvents,
      lag_seconds: Math.round(lagSeconds * 10) / 10,
      ...(error && { error }),
      ...(failedEvent && { failed_event: failedEvent }),
    };
  }
  return projections;
}

/** What is wrong with a serving projection, in one sentence, or null. */
function projectionProblem(name: string, state: string, health: ProjectionHealth, maxLagMs: number): string | null {
  const { error, failed_event: failed } = health;
  if (state === 'parked') return `projection ${name} is parked at position ${failed?.position} (event ${failed?.type}): ${error}`;
  if (state === 'dropped') return `projection ${name} dropped and is resubscribing: ${error}`;
  if (health.lag_seconds * 1000 > maxLagMs) return `projection ${name} is ${health.lag_events} events (${health.lag_seconds} s) behind the log`;
  return null;
}

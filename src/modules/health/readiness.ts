import { Inject, Injectable } from '@nestjs/common';
import { CONFIG, ParleyConfig } from '../../config/config';
import { LogPosition, positionMagnitude, positionUnit, RecordedEvent } from '../../shared/domain/event';
import { LiveLog } from '../../shared/subscriptions/live-log';
import type { SpaceLeft } from '../../shared/ports/event-store.port';
import { HEALTH_SOURCES, HealthSources } from './health-sources';

export interface ProjectionHealth {
  readonly state: string;
  readonly role?: 'building' | 'retired';
  readonly position: string | null;
  /** How far behind the head of the log, in events where the log numbers them (SQLite)... */
  readonly lag_events?: number;
  /** ...or in bytes of log where positions are offsets (EventStoreDB): one of the two is set. */
  readonly lag_log_bytes?: number;
  readonly lag_seconds: number;
  readonly error?: string;
  /** `unheld` only: how long ago the lease lapsed (absent when no lease is stored: released or never taken). */
  readonly lease_expired_seconds_ago?: number;
  readonly failed_event?: { readonly position: string; readonly type: string; readonly stream?: string };
}

export interface StorageHealthReport {
  readonly state: 'ok' | 'failing';
  readonly error?: string;
  /** How many more bytes the event log can take, and what bounds it (absent where the store cannot tell: EventStoreDB). */
  readonly space_left_bytes?: number;
  readonly limited_by?: 'volume' | 'page_limit';
  /** Below STORAGE_LOW_SPACE_BYTES: a warning, never a reason to stop routing traffic here. */
  readonly low_space?: boolean;
}

export interface HealthReport {
  readonly status: 'ok' | 'unavailable' | 'starting' | 'stopping';
  /** What is wrong, one sentence each; empty when ready. */
  readonly problems: readonly string[];
  /** What an operator should act on soon but does not stop this process serving (low disk space). */
  readonly warnings: readonly string[];
  readonly projections: Readonly<Record<string, ProjectionHealth>>;
  readonly live_log: { readonly state: 'following' | 'dropped'; readonly error?: string };
  readonly storage: StorageHealthReport;
}

/** How a process judges the leases of projections it does not fold itself (see projectionHealth). */
export interface LeaseJudgement {
  /** How long a lapsed or missing lease is tolerated, so a worker's takeover in progress is not reported. */
  readonly graceMs: number;
  /** When this process first found each lease missing: a released lease leaves no expiry to count from. */
  readonly missingSince: Map<string, number>;
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
  private readonly leases: LeaseJudgement;

  constructor(
    @Inject(HEALTH_SOURCES) private readonly sources: HealthSources,
    @Inject(CONFIG) private readonly config: ParleyConfig,
    private readonly liveLog: LiveLog,
  ) {
    this.leases = { graceMs: config.projectionLeaseTtlMs, missingSince: new Map() };
  }

  async report(): Promise<HealthReport> {
    const problems: string[] = [];
    const projections = await projectionHealth(this.sources, this.leases);
    for (const [name, health] of Object.entries(projections)) {
      // A version building beside the serving one, or kept after the switch, never makes the process unready.
      if (!health.role) problems.push(...projectionProblems(name, health, this.config.readinessMaxLagMs));
    }
    const dropped = this.liveLog.dropped;
    if (dropped) problems.push(`the live log dropped and is resubscribing: ${dropped.error}`);
    // Unready only while writes fail: an append refused for storage moments ago, or none since
    // that a small write to the read models (the probe) shows storage accepts writes again.
    // Low free space alone is a warning: the appends that still fit are served.
    const recorded = this.sources.storageFailure();
    let failing: { readonly error: string } | null = recorded;
    if (recorded && !recorded.recent) {
      try {
        await this.sources.probeStorage();
        failing = null;
      } catch {
        /* still failing */
      }
    }
    if (failing) problems.push(`storage refuses writes: ${failing.error}`);
    const warnings: string[] = [];
    const space = await this.sources.eventLogSpaceLeft().catch(() => null);
    const lowSpace = space !== null && space.bytes < this.config.storageLowSpaceBytes;
    if (lowSpace) warnings.push(lowSpaceWarning(space, this.config.storageLowSpaceBytes));
    const status = this.state !== 'serving' ? this.state : problems.length ? 'unavailable' : 'ok';
    return {
      status,
      problems,
      warnings,
      projections,
      live_log: dropped ? { state: 'dropped', error: dropped.error } : { state: 'following' },
      storage: {
        ...(failing ? { state: 'failing', error: failing.error } : { state: 'ok' }),
        ...(space && { space_left_bytes: space.bytes, limited_by: space.limitedBy, low_space: lowSpace }),
      },
    };
  }
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

function lowSpaceWarning(space: SpaceLeft, threshold: number): string {
  const where = space.limitedBy === 'page_limit' ? "the event log's page limit" : "the event log's volume";
  return `${where} leaves ${mib(space.bytes)} for the event log, below STORAGE_LOW_SPACE_BYTES (${mib(threshold)}): free space before writes are refused`;
}

/**
 * Where every projection version stands now: its state, position and lag behind the head of
 * the log (what /health reports and /metrics exports, in API processes and workers alike).
 * With `leases`, a projection this process does not fold is `running_elsewhere` only while some
 * worker holds its lease; past the grace it is `unheld` (nothing folds it, whatever its lag says).
 */
export async function projectionHealth(sources: HealthSources, leases?: LeaseJudgement): Promise<Record<string, ProjectionHealth>> {
  const now = Date.now();
  const local = new Map((sources.projectorStatus() ?? []).map((s) => [s.name, s]));
  const elsewhere = sources.checkpoints.filter((name) => !local.has(name));
  const [positionOf, head, parkedDocs, stored] = await Promise.all([
    sources.refreshPositions(),
    sources.headPosition(),
    sources.parkedProjections().catch(() => []),
    // Unreadable leases say nothing about the workers: the lag still judges them.
    leases && elsewhere.length ? sources.leases(elsewhere).catch(() => null) : null,
  ]);
  const parked = new Map(parkedDocs.map((d) => [d._id, d]));
  const projections: Record<string, ProjectionHealth> = {};
  // Projections that keep up stand at the same position: the log is read once per position, not once per projection.
  const firstAfter = new Map<LogPosition | null, Promise<RecordedEvent | null>>();
  for (const name of sources.checkpoints) {
    const position = positionOf(name);
    const lag = Math.max(0, positionMagnitude(head) - positionMagnitude(position));
    let lagSeconds = 0;
    if (lag > 0) {
      if (!firstAfter.has(position)) firstAfter.set(position, sources.firstEventAfter(position).catch(() => null));
      const next = await firstAfter.get(position)!;
      if (next) lagSeconds = Math.max(0, (now - Date.parse(next.recordedAt)) / 1000);
    }
    const mine = local.get(name);
    const parkedDoc = parked.get(name);
    let state = mine?.state ?? 'running_elsewhere';
    let leaseExpiredSecondsAgo: number | undefined;
    if (!mine && leases && stored) {
      const lease = stored.get(name);
      if (lease && lease.expiresAtMs >= now) leases.missingSince.delete(name);
      else {
        if (lease) leases.missingSince.delete(name);
        else if (!leases.missingSince.has(name)) leases.missingSince.set(name, now);
        const since = lease ? lease.expiresAtMs : leases.missingSince.get(name)!;
        if (now - since > leases.graceMs) {
          state = 'unheld';
          if (lease) leaseExpiredSecondsAgo = Math.round((now - lease.expiresAtMs) / 1000);
        }
      }
    }
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
      [positionUnit(head ?? position) === 'log_bytes' ? 'lag_log_bytes' : 'lag_events']: lag,
      lag_seconds: Math.round(lagSeconds * 10) / 10,
      ...(error && { error }),
      ...(leaseExpiredSecondsAgo !== undefined && { lease_expired_seconds_ago: leaseExpiredSecondsAgo }),
      ...(failedEvent && { failed_event: failedEvent }),
    };
  }
  return projections;
}

/** What is wrong with a serving projection, one sentence each: its state, then its lag. */
function projectionProblems(name: string, health: ProjectionHealth, maxLagMs: number): string[] {
  const { state, error, failed_event: failed } = health;
  if (state === 'parked') return [`projection ${name} is parked at position ${failed?.position} (event ${failed?.type}): ${error}`];
  if (state === 'dropped') return [`projection ${name} dropped and is resubscribing: ${error}`];
  if (state === 'retrying') return [`projection ${name} failed on event ${failed?.type} at position ${failed?.position} and tries it again: ${error}`];
  const problems: string[] = [];
  if (state === 'unheld') {
    const expired = health.lease_expired_seconds_ago;
    problems.push(`no projector worker holds ${name} (${expired === undefined ? 'no lease is stored' : `lease expired ${expired} s ago`})`);
  }
  if (health.lag_seconds * 1000 > maxLagMs) {
    const lag = health.lag_log_bytes === undefined ? `${health.lag_events} events` : `${health.lag_log_bytes} bytes of log`;
    problems.push(`projection ${name} is ${lag} (${health.lag_seconds} s) behind the log`);
  }
  return problems;
}

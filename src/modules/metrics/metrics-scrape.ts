import { createHash, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../../shared/domain/errors';
import { positionMagnitude } from '../../shared/domain/event';
import { metricsRegistry, ProjectionLag, recordEventLogSpace, recordProjections } from '../../shared/observability/metrics';
import type { ProjectionHealth, StorageHealthReport } from '../health/readiness';
import { bearerCredential } from '../../shared/http/bearer';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * One scrape of the process's metrics, wherever it is served (the API's GET /metrics, a
 * projector worker's METRICS_PORT): the METRICS_TOKEN check and the Prometheus text.
 */
export class MetricsScrape {
  readonly contentType = metricsRegistry.contentType;
  private readonly token: Buffer | null;

  constructor(metricsToken: string | undefined) {
    this.token = metricsToken ? digest(metricsToken) : null;
  }

  /**
   * Why this scrape is refused, or null. Metrics are served only when METRICS_TOKEN is set, to
   * a scraper that sends it as `Authorization: Bearer <METRICS_TOKEN>` (compared in constant
   * time); unset, the route answers 404, so a deployment never exposes its metrics by accident.
   */
  refusal(authorization: string | undefined): { readonly error: DomainError; readonly headers: Readonly<Record<string, string>> } | null {
    if (!this.token) {
      return { error: new DomainError('not_found', 'metrics_disabled', 'Metrics are served only when METRICS_TOKEN is set'), headers: {} };
    }
    const offered = bearerCredential(authorization);
    if (offered && timingSafeEqual(digest(offered), this.token)) return null;
    return {
      error: new DomainError('unauthorized', 'invalid_metrics_token', 'Send Authorization: Bearer <METRICS_TOKEN> to read the metrics'),
      headers: { 'www-authenticate': 'Bearer realm="metrics"' },
    };
  }

  /** The Prometheus text, with lag, rebuild progress and the event log's room as /health computes them now. */
  async render(projectionHealth: Readonly<Record<string, ProjectionHealth>>, storage: Partial<StorageHealthReport> = {}): Promise<string> {
    recordEventLogSpace(storage);
    const projections: Record<string, ProjectionLag> = {};
    for (const [name, p] of Object.entries(projectionHealth)) {
      const folded = positionMagnitude(p.position);
      projections[name] = { ...p, folded, head: folded + (p.lag_events ?? p.lag_log_bytes ?? 0) };
    }
    recordProjections(projections);
    return metricsRegistry.metrics();
  }
}

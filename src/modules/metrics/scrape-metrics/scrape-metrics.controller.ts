import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { DomainError } from '../../../shared/domain/errors';
import { positionMagnitude } from '../../../shared/domain/event';
import { metricsRegistry, ProjectionLag, recordProjections } from '../../../shared/observability/metrics';
import { Readiness } from '../../health/readiness';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * GET /metrics: Prometheus text. Served only when METRICS_TOKEN is set, to a scraper that
 * sends it as `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time); unset, the
 * route answers 404, so a deployment never exposes its metrics by accident.
 */
@Controller('metrics')
export class ScrapeMetricsController {
  private readonly token: Buffer | null;

  constructor(
    @Inject(CONFIG) config: ParleyConfig,
    private readonly readiness: Readiness,
  ) {
    this.token = config.metricsToken ? digest(config.metricsToken) : null;
  }

  @Get()
  async scrape(@Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    if (!this.token) throw new DomainError('not_found', 'metrics_disabled', 'Metrics are served only when METRICS_TOKEN is set');
    const offered = /^Bearer (.+)$/.exec(authorization ?? '')?.[1];
    if (!offered || !timingSafeEqual(digest(offered), this.token)) {
      void reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw new DomainError('unauthorized', 'invalid_metrics_token', 'Send Authorization: Bearer <METRICS_TOKEN> to read the metrics');
    }
    // Lag and rebuild progress are computed as /health computes them, once per scrape.
    const report = await this.readiness.report();
    const projections: Record<string, ProjectionLag> = {};
    for (const [name, p] of Object.entries(report.projections)) {
      const folded = positionMagnitude(p.position);
      projections[name] = { ...p, folded, head: folded + p.lag_events };
    }
    recordProjections(projections);
    void reply.header('content-type', metricsRegistry.contentType);
    return metricsRegistry.metrics();
  }
}

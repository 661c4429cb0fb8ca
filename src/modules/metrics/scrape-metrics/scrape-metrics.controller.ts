import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { Readiness } from '../../health/readiness';
import { MetricsScrape } from '../metrics-scrape';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** GET /metrics: Prometheus text, behind METRICS_TOKEN (see MetricsScrape). */
@Controller('metrics')
export class ScrapeMetricsController {
  private readonly scrape: MetricsScrape;

  constructor(
    @Inject(CONFIG) config: ParleyConfig,
    private readonly readiness: Readiness,
  ) {
    this.scrape = new MetricsScrape(config.metricsToken);
  }

  @Get()
  @Requires(Access.ownCredential('the METRICS_TOKEN (MetricsScrape)'))
  async metrics(@Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const refusal = this.scrape.refusal(authorization);
    if (refusal) {
      void reply.headers(refusal.headers);
      throw refusal.error;
    }
    // Lag, rebuild progress and the log's room are computed as /health computes them, once per scrape.
    const report = await this.readiness.report();
    void reply.header('content-type', this.scrape.contentType);
    return this.scrape.render(report.projections, report.storage);
  }
}

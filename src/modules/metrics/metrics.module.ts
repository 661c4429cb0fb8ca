import { Module } from '@nestjs/common';
import { ScrapeMetricsController } from './scrape-metrics/scrape-metrics.controller';

/** GET /metrics (Prometheus), guarded by METRICS_TOKEN; the instruments live in shared/observability. */
@Module({ controllers: [ScrapeMetricsController] })
export class MetricsModule {}

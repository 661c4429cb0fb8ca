import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { HealthReport, Readiness } from '../readiness';
import { messageOf } from '../../../shared/domain/errors';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/**
 * Readiness: 200 while this process should receive traffic (serving, every projection running
 * and caught up within a bound, the live log following, storage writable); 503 with the same
 * JSON body naming what is wrong otherwise. Orchestrators route on it.
 */
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  @Get()
  @Requires(Access.public)
  async check(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthReport> {
    const report = await this.readiness.report().catch(
      (error): HealthReport => ({
        status: 'unavailable',
        problems: [`health could not be computed: ${messageOf(error)}`],
        warnings: [],
        projections: {},
        live_log: { state: 'following' },
        storage: { state: 'failing', error: String(error) },
      }),
    );
    if (report.status !== 'ok') void reply.status(503);
    return report;
  }

  /** Liveness: answers while the process runs and its event loop turns (orchestrators restart on it). */
  @Get('live')
  @Requires(Access.public)
  live(): { status: 'alive' } {
    return { status: 'alive' };
  }
}

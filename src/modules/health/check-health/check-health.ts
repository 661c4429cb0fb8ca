import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Readiness } from '../readiness';

/** 200 once this process serves requests on caught-up read models; 503 before that or while stopping. */
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  @Get()
  check(@Res({ passthrough: true }) reply: FastifyReply): { status: string } {
    if (this.readiness.ready) return { status: 'ok' };
    void reply.status(503);
    return { status: this.readiness.state };
  }
}

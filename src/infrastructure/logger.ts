import { LoggerService } from '@nestjs/common';
import { hostname } from 'node:os';
import pino from 'pino';

/**
 * One pino logger for the whole process. Nothing secret is ever passed to it: key secrets
 * stay sealed in events and opened only inside the key ring. Every line carries the process id
 * and host name, so the lines of several API processes and workers can be told apart.
 */
export const createLogger = (level: string) =>
  pino({ level, base: { service: 'parley', pid: process.pid, hostname: hostname() }, redact: ['req.headers.authorization', '*.secret', '*.password'] });

export type Logger = ReturnType<typeof createLogger>;

/** Nest's start-up chatter (modules loaded, routes mapped): debug, not info. */
const STARTUP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** Lets Nest's own messages go through pino. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    if (context && STARTUP_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { AddressInfo } from 'node:net';
import { CONFIG, ParleyConfig } from '../../../config/config';

const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]']);

/**
 * Where clients reach this server, for the absolute links it hands out.
 *
 * PUBLIC_URL wins whenever it is set (behind a proxy only the operator knows the public
 * address). Otherwise a link made while answering a request uses that request's own scheme and
 * Host, so it works however the client reached the server; a link made with no request at hand
 * (messages rendered for fetches and for live subscriptions alike) uses the default origin:
 * `https://localhost:<HTTPS_PORT>` when HTTPS is on, else `http://localhost:<port listened on>`
 * (the listening address instead of localhost when HOST names one).
 */
@Injectable()
export class PublicOrigin {
  constructor(
    @Inject(CONFIG) private readonly config: ParleyConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  forRequest(request: FastifyRequest): string {
    if (this.config.publicUrl) return this.config.publicUrl;
    const host = request.headers.host;
    if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host)) return this.fallback();
    return `${request.protocol === 'https' ? 'https' : 'http'}://${host}`;
  }

  fallback(): string {
    if (this.config.publicUrl) return this.config.publicUrl;
    const host = WILDCARD_HOSTS.has(this.config.host)
      ? 'localhost'
      : this.config.host.includes(':')
        ? `[${this.config.host}]`
        : this.config.host;
    if (this.config.httpsPort) return `https://${host}:${this.config.httpsPort}`;
    return `http://${host}:${this.config.port || this.listeningPort() || this.config.port}`;
  }

  /** The HTTP port actually listened on (PORT=0 picks a free one). */
  private listeningPort(): number | undefined {
    try {
      const address = this.adapterHost.httpAdapter?.getHttpServer()?.address() as AddressInfo | string | null;
      return address && typeof address === 'object' ? address.port : undefined;
    } catch {
      return undefined;
    }
  }
}

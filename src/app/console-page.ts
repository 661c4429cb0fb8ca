import type { FastifyInstance } from 'fastify';
import type { ParleyConfig } from '../config/config';
import { registerBuiltPage } from '../shared/http/built-page';
import { Access } from '../modules/roles/access-rules';

/**
 * The operator console at /console (web/console), served only when CONSOLE_ENABLED is on: off,
 * no route is registered and /console is an unknown path like any other. What the page is told
 * is public (anyone may load it): whether a deployment sign-in exists, and the bootstrap
 * instance's locator to prefill the sign-in. The page holds no data; every screen calls the
 * documented APIs with the operator's own credential.
 */
export function registerConsolePage(fastify: FastifyInstance, config: ParleyConfig): void {
  if (!config.consoleEnabled) return;
  const bootstrap = config.bootstrap;
  registerBuiltPage(fastify, {
    page: 'console',
    prefix: '/console',
    // The page itself is public; what it shows comes from the APIs, each with its own credential.
    routeConfig: { access: Access.public },
    config: {
      deployment_sign_in: config.consoleAdminSecret !== undefined,
      ...(bootstrap && { instance_locator: `v1:${bootstrap.cluster}:${bootstrap.instanceId}` }),
    },
  });
}

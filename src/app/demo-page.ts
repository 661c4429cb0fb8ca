import type { FastifyInstance } from 'fastify';
import type { ParleyConfig } from '../config/config';
import { Access } from '../modules/roles/access-rules';
import { registerBuiltPage } from '../shared/http/built-page';

/**
 * The demo chat (web/demo, docs/demo.md) is served at /demo while the bootstrap instance
 * (INSTANCE_LOCATOR) has its test token provider on (TOKEN_PROVIDER_ENABLED=true): the page signs
 * its visitors in with that provider. Otherwise neither the page nor its sign-up route exists.
 */
export const demoServed = (config: ParleyConfig): boolean => config.bootstrap?.tokenProviderEnabled === true;

export const DEMO_PREFIX = '/demo';

/** What the page reads at start (web/demo/main.ts): the instance it chats in. */
export interface DemoPageConfig {
  readonly instanceLocator: string;
}

export function registerDemoPage(fastify: FastifyInstance, config: ParleyConfig): void {
  const bootstrap = config.bootstrap;
  if (!bootstrap || !demoServed(config)) return;
  const pageConfig: DemoPageConfig = { instanceLocator: `v1:${bootstrap.cluster}:${bootstrap.instanceId}` };
  // Anyone may load the page; what it does takes the test token provider's tokens.
  registerBuiltPage(fastify, { page: 'demo', prefix: DEMO_PREFIX, config: { ...pageConfig }, routeConfig: { access: Access.public } });
}

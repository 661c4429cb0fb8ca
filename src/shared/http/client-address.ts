import proxyAddr from '@fastify/proxy-addr';
import type { IncomingMessage } from 'node:http';

/**
 * Whose word on the client's address is taken (TRUST_PROXY): the proxies listed, by address,
 * CIDR range or proxy-addr's presets. With none, a request's address is its connection's.
 * Fastify (`request.ip`) and the /ws bridge use the same rule.
 */
export function trustedProxies(trustProxy: readonly string[]): ((address: string, hop: number) => boolean) | false {
  return trustProxy.length === 0 ? false : proxyAddr.compile([...trustProxy]);
}

/** The client address of a request outside Fastify's routing (a /ws upgrade), as `request.ip` would say it. */
export function clientAddressOf(request: IncomingMessage, trust: ((address: string, hop: number) => boolean) | false): string {
  return trust ? proxyAddr(request, trust) : (request.socket.remoteAddress ?? '');
}

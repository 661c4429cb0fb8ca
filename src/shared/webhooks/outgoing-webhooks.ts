import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type Agent, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { WebhookTargets } from './webhook-targets';

/** A webhook not sent because its URL leads to an address WEBHOOK_ALLOWED_HOSTS does not allow. */
export class WebhookTargetRefused extends Error {
  constructor(readonly reason: string) {
    super(`not sent: ${reason}, which webhooks may not reach unless WEBHOOK_ALLOWED_HOSTS allows it`);
  }
}

/** Every address a host name resolves to (the system resolver, as connections use it). */
export type ResolveAll = (host: string) => Promise<readonly LookupAddress[]>;

const systemResolver: ResolveAll = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

export interface WebhookPost {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Ends the attempt (resolving, connecting, waiting for the answer's status, reading the rest of it). */
  readonly signal: AbortSignal;
  /**
   * Keeps the connection for the next POST to the same target (an `http.Agent` or `https.Agent`
   * with keepAlive, matching the URL's scheme): the answer's body is then read to its end and
   * dropped, within `signal`. A kept connection goes to the address checked when it was made.
   * Without it, each POST has a connection of its own, closed once the status came.
   */
  readonly agent?: Agent;
}

/**
 * Every webhook Parley sends goes through here: a POST to a URL someone else chose, refused
 * when it leads anywhere but a public address unless the operator allows it
 * (WebhookTargets, WEBHOOK_ALLOWED_HOSTS). The host is resolved once, at delivery time, every
 * address it resolves to is checked, and the connection is made to the address that passed —
 * never resolved again, so a DNS answer that changes between the check and the connection
 * (DNS rebinding) cannot lead it elsewhere. TLS still checks the certificate against the host
 * name. Redirects are not followed; the answer's body is not read.
 */
export class OutgoingWebhooks {
  constructor(
    private readonly targets: WebhookTargets,
    private readonly resolveAll: ResolveAll = systemResolver,
  ) {}

  /** POSTs `post.body` to `url`: resolves the answer's status; throws WebhookTargetRefused, or the network's error. */
  async post(url: string, post: WebhookPost): Promise<number> {
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new WebhookTargetRefused(`${target.protocol} is not http or https`);
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    const addresses = await this.checkedAddresses(host, port, post.signal);
    // The connection goes to the checked addresses (tried in turn), whatever the host name resolves to by then.
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if (options.all) (callback as unknown as (e: null, a: readonly LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    };
    const options: RequestOptions = {
      method: 'POST',
      host,
      port,
      path: `${target.pathname}${target.search}`,
      headers: { ...post.headers, host: target.host, 'content-length': String(Buffer.byteLength(post.body)) },
      lookup: pinned,
      agent: post.agent ?? false,
      signal: post.signal,
    };
    return new Promise<number>((resolve, reject) => {
      const request = (target.protocol === 'https:' ? httpsRequest : httpRequest)(options, (response: IncomingMessage) => {
        resolve(response.statusCode ?? 0);
        if (post.agent) response.resume();
        else response.destroy();
      });
      request.on('error', reject);
      request.end(post.body);
    });
  }

  /**
   * Why `url` may not be a webhook's target, or null when it may: not http(s), or its host
   * resolves to no allowed address. A host that does not resolve now is not refused here (it is
   * checked again, as every target is, when a webhook is sent). For checks at registration.
   */
  async refusal(url: string, signal: AbortSignal = AbortSignal.timeout(5_000)): Promise<string | null> {
    const target = new URL(url);
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return `${target.protocol} is not http or https`;
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    try {
      await this.checkedAddresses(host, port, signal);
      return null;
    } catch (error) {
      return error instanceof WebhookTargetRefused ? error.reason : null;
    }
  }

  /** The addresses `host` resolves to that the targets allow, in the resolver's order; throws WebhookTargetRefused when none is. */
  private async checkedAddresses(host: string, port: number, signal: AbortSignal): Promise<readonly LookupAddress[]> {
    const literal = isIP(host);
    const addresses = literal ? [{ address: host, family: literal }] : await abortable(this.resolveAll(host), signal);
    const allowed = addresses.filter((address) => this.targets.refusal(host, port, address.address) === null);
    if (allowed.length > 0) return allowed;
    const refusals = addresses.map((address) => this.targets.refusal(host, port, address.address));
    throw new WebhookTargetRefused(refusals.join('; ') || `${host} resolves to no address`);
  }
}

/** `promise`, or the signal's reason once it aborts first (DNS lookups cannot be cancelled). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

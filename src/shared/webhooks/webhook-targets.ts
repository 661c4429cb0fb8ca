import { BlockList, isIP } from 'node:net';

/**
 * Addresses no webhook may reach unless the operator allows them: this host, its networks and
 * everything else that is not a public unicast address (RFC 6890 and the IANA special-purpose
 * registries). A webhook URL is chosen by whoever publishes, so without this a publish could
 * make the server send requests into its own network (cloud metadata at 169.254.169.254, an
 * admin port on localhost, a database beside it).
 */
const NON_PUBLIC: ReadonlyArray<readonly [network: string, prefix: number, family: 'ipv4' | 'ipv6', what: string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved (IETF protocol assignments)'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', 'reserved (6to4 relay)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved (and broadcast)'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['64:ff9b:1::', 48, 'ipv6', 'private (local NAT64)'],
  ['100::', 64, 'ipv6', 'reserved (discard)'],
  ['2001::', 23, 'ipv6', 'reserved (IETF protocol assignments)'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['2002::', 16, 'ipv6', 'reserved (6to4)'],
  ['3fff::', 20, 'ipv6', 'documentation'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'reserved (site-local)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const nonPublic = new Map<string, BlockList>();
for (const [network, prefix, family, what] of NON_PUBLIC) {
  const list = nonPublic.get(what) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  nonPublic.set(what, list);
}

/** NAT64 (64:ff9b::/96) carries an IPv4 address in its last 32 bits: that address is what is reached. */
function embeddedIpv4(address: string): string | null {
  const m = /^64:ff9b::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address) ?? null;
  if (m) {
    const [high, low] = [parseInt(m[1], 16), parseInt(m[2], 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  const dotted = /^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return dotted ? dotted[1] : null;
}

/** What kind of non-public address `address` is (e.g. "loopback"), or null for a public unicast one. */
export function nonPublicKind(address: string): string | null {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const v4 = family === 'ipv6' ? embeddedIpv4(address) : null;
  if (v4) return nonPublicKind(v4);
  // IPv4 rules also match IPv4-mapped IPv6 addresses (::ffff:127.0.0.1).
  for (const [what, list] of nonPublic) if (list.check(address, family)) return what;
  return null;
}

/** One entry of WEBHOOK_ALLOWED_HOSTS. */
type AllowEntry =
  | { readonly kind: 'host'; readonly host: string; readonly port: number | null }
  | { readonly kind: 'network'; readonly list: BlockList; readonly port: number | null };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*\.?$/;

/** `[v6]:port`, `v4:port`, `host:port`, or any of them without the port; a v6 address alone has no brackets. */
function splitPort(entry: string): { host: string; port: number | null } | null {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] === undefined ? null : Number(bracketed[2]) };
  if (isIP(entry.split('/')[0]) === 6) return { host: entry, port: null };
  const colon = entry.lastIndexOf(':');
  if (colon < 0) return { host: entry, port: null };
  const port = entry.slice(colon + 1);
  return /^\d+$/.test(port) ? { host: entry.slice(0, colon), port: Number(port) } : null;
}

/** Parses WEBHOOK_ALLOWED_HOSTS' entries; throws an Error naming the first entry it cannot read. */
function parseEntry(raw: string): AllowEntry {
  const entry = raw.trim().toLowerCase();
  const split = splitPort(entry);
  if (!split || (split.port !== null && (split.port < 1 || split.port > 65535))) throw new Error(raw.trim());
  const { host, port } = split;
  const [network, prefixText] = host.split('/');
  const family = isIP(network);
  if (family !== 0) {
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : /^\d+$/.test(prefixText) ? Number(prefixText) : NaN;
    if (!(prefix >= 0 && prefix <= max)) throw new Error(raw.trim());
    const list = new BlockList();
    list.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
    return { kind: 'network', list, port };
  }
  if (prefixText !== undefined || !HOST_NAME.test(host)) throw new Error(raw.trim());
  return { kind: 'host', host: host.replace(/\.$/, ''), port };
}

/**
 * Where outgoing webhooks may go: any public unicast address, and the non-public targets the
 * operator allows in WEBHOOK_ALLOWED_HOSTS — host names (any port), `host:port` pairs, IP
 * addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`), each optionally with `:port`
 * (IPv6 in brackets then: `[::1]:9000`, `[fd00::/8]:9000`). A host name entry allows that name whatever it resolves to; the
 * others allow the addresses it resolves to.
 */
/** Decisions a WebhookTargets keeps (a host, port and address each): every delivery checks its target again. */
const DECISIONS_KEPT = 1_024;

export class WebhookTargets {
  private readonly entries: readonly AllowEntry[];
  /**
   * Decisions already made, by host, port and address: a decision depends on nothing else (the
   * allowed entries are fixed), and checking an address against the lists costs more than the
   * rest of a delivery's preparation. The host is still resolved at every delivery.
   */
  private readonly decided = new Map<string, string | null>();

  /** `allowed`: WEBHOOK_ALLOWED_HOSTS' entries (see `parseWebhookAllowedHosts` for their checks). */
  constructor(allowed: readonly string[] = []) {
    this.entries = allowed.map(parseEntry);
  }

  /**
   * Why a webhook to `host` (the URL's host, lower case, without brackets) and `port` may not
   * go to `address` (one address the host resolved to), or null when it may.
   */
  refusal(host: string, port: number, address: string): string | null {
    const key = `${host} ${port} ${address}`;
    let decision = this.decided.get(key);
    if (decision === undefined) {
      decision = this.decide(host, port, address);
      if (this.decided.size >= DECISIONS_KEPT) this.decided.clear();
      this.decided.set(key, decision);
    }
    return decision;
  }

  private decide(host: string, port: number, address: string): string | null {
    const kind = nonPublicKind(address);
    if (kind === null || this.allows(host, port, address)) return null;
    return host === address ? `${address} is a ${kind} address` : `${host} resolves to ${address}, a ${kind} address`;
  }

  private allows(host: string, port: number, address: string): boolean {
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    return this.entries.some(
      (entry) =>
        (entry.port === null || entry.port === port) &&
        (entry.kind === 'host' ? entry.host === host.replace(/\.$/, '') : entry.list.check(address, family)),
    );
  }
}

/**
 * WEBHOOK_ALLOWED_HOSTS as a list of entries: comma-separated, blanks ignored. Throws an Error
 * whose message is the first entry that is neither a host name, an IP address nor a CIDR range
 * (each with an optional port).
 */
export function parseWebhookAllowedHosts(value: string | undefined): readonly string[] {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) parseEntry(entry);
  return entries;
}

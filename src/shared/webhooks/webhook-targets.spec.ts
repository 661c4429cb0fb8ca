import { nonPublicKind, parseWebhookAllowedHosts, WebhookTargets } from './webhook-targets';

describe('nonPublicKind: the addresses no webhook reaches unless allowed', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private (unique local)'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved (and broadcast)'],
    ['192.0.2.10', 'documentation'],
    ['2001:db8::1', 'documentation'],
    // IPv4 behind IPv6: what is reached is the IPv4 address.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b::127.0.0.1', 'loopback'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])('%s is public', (address) => {
    expect(nonPublicKind(address)).toBeNull();
  });
});

describe('WebhookTargets', () => {
  it('decides each host, port and address alone, the same when asked again (decisions are kept)', () => {
    const targets = new WebhookTargets(['hooks.internal:9000', '10.1.0.0/16']);
    for (let round = 0; round < 2; round++) {
      expect(targets.refusal('hooks.internal', 9000, '10.9.9.9')).toBeNull();
      expect(targets.refusal('hooks.internal', 9001, '10.9.9.9')).toBe('hooks.internal resolves to 10.9.9.9, a private address');
      expect(targets.refusal('other.internal', 9000, '10.9.9.9')).toBe('other.internal resolves to 10.9.9.9, a private address');
      expect(targets.refusal('other.internal', 9000, '10.1.2.3')).toBeNull();
      expect(targets.refusal('10.9.9.9', 80, '10.9.9.9')).toBe('10.9.9.9 is a private address');
    }
  });

  it('refuses non-public addresses, saying which and why', () => {
    const targets = new WebhookTargets();
    expect(targets.refusal('example.com', 443, '93.184.215.14')).toBeNull();
    expect(targets.refusal('127.0.0.1', 80, '127.0.0.1')).toBe('127.0.0.1 is a loopback address');
    expect(targets.refusal('metadata.internal', 80, '169.254.169.254')).toBe('metadata.internal resolves to 169.254.169.254, a link-local address');
  });

  it('allows what WEBHOOK_ALLOWED_HOSTS lists: a host name (whatever it resolves to), host:port, an address, a CIDR range', () => {
    const targets = new WebhookTargets(['hooks.internal', 'localhost:9000', '10.0.0.0/8', '192.168.1.5', '[::1]:8080', '[fd00::/8]:7000']);
    expect(targets.refusal('hooks.internal', 1234, '10.9.9.9')).toBeNull();
    expect(targets.refusal('hooks.internal.', 80, '172.16.0.1')).toBeNull();
    expect(targets.refusal('localhost', 9000, '127.0.0.1')).toBeNull();
    expect(targets.refusal('localhost', 9001, '127.0.0.1')).not.toBeNull();
    expect(targets.refusal('anything.example', 80, '10.20.30.40')).toBeNull();
    expect(targets.refusal('192.168.1.5', 81, '192.168.1.5')).toBeNull();
    expect(targets.refusal('192.168.1.6', 81, '192.168.1.6')).not.toBeNull();
    expect(targets.refusal('::1', 8080, '::1')).toBeNull();
    expect(targets.refusal('::1', 8081, '::1')).not.toBeNull();
    expect(targets.refusal('v6.internal', 7000, 'fd00::5')).toBeNull();
    expect(targets.refusal('v6.internal', 7001, 'fd00::5')).not.toBeNull();
    // Another name for an allowed host's address is not the allowed name.
    expect(targets.refusal('evil.example', 80, '172.16.0.1')).not.toBeNull();
  });

  it('reads the variable as a comma list, and names the first entry it cannot read', () => {
    expect(parseWebhookAllowedHosts(undefined)).toEqual([]);
    expect(parseWebhookAllowedHosts(' a.example , 10.0.0.0/8,, [::1]:9 ')).toEqual(['a.example', '10.0.0.0/8', '[::1]:9']);
    for (const bad of ['http://x.example', '10.0.0.0/33', 'host:99999', 'bad host', '::1:80x', 'a.example/8', 'host:0']) {
      expect(() => parseWebhookAllowedHosts(`ok.example,${bad}`)).toThrow(bad);
    }
  });
});

import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { OutgoingWebhooks, ResolveAll, WebhookTargetRefused } from './outgoing-webhooks';
import { WebhookTargets } from './webhook-targets';

/** Webhooks sent to a real local receiver, with a resolver the test controls (as DNS would answer). */
describe('OutgoingWebhooks', () => {
  let receiver: Server;
  let port: number;
  const received: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const post = { headers: { 'content-type': 'application/json' }, body: '{"hello":"hook"}' };
  const signal = () => AbortSignal.timeout(5_000);

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        received.push({ url: request.url!, headers: request.headers, body });
        response.writeHead(202).end('ignored');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => receiver.close(resolve)));
  beforeEach(() => (received.length = 0));

  /** A resolver answering `answers` in turn (the last one from then on), counting its calls. */
  const resolver = (...answers: string[][]) => {
    const calls: string[] = [];
    const resolve: ResolveAll = async (host) => {
      calls.push(host);
      const answer = answers[Math.min(calls.length, answers.length) - 1];
      return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { resolve, calls };
  };

  it('connects to the address it checked: a host name that resolves elsewhere afterwards (DNS rebinding) is not looked up again', async () => {
    const dns = resolver(['127.0.0.1'], ['169.254.169.254']);
    const webhooks = new OutgoingWebhooks(new WebhookTargets([`127.0.0.1:${port}`]), dns.resolve);
    expect(await webhooks.post(`http://hooks.example:${port}/a?x=1`, { ...post, signal: signal() })).toBe(202);
    expect(dns.calls).toEqual(['hooks.example']);
    expect(received).toEqual([{ url: '/a?x=1', headers: expect.objectContaining({ host: `hooks.example:${port}`, 'content-length': '16' }), body: post.body }]);
  });

  it('refuses a host that resolves only to non-public addresses, and sends nothing', async () => {
    const webhooks = new OutgoingWebhooks(new WebhookTargets(), resolver(['10.0.0.7', '127.0.0.1']).resolve);
    const attempt = webhooks.post(`http://hooks.example:${port}/b`, { ...post, signal: signal() });
    await expect(attempt).rejects.toThrow(WebhookTargetRefused);
    await expect(attempt).rejects.toThrow(
      'not sent: hooks.example resolves to 10.0.0.7, a private address; hooks.example resolves to 127.0.0.1, a loopback address, which webhooks may not reach unless WEBHOOK_ALLOWED_HOSTS allows it',
    );
    expect(received).toEqual([]);
  });

  it('uses only the allowed ones among the addresses a host resolves to', async () => {
    const webhooks = new OutgoingWebhooks(new WebhookTargets([`127.0.0.1:${port}`]), resolver(['10.0.0.7', '127.0.0.1']).resolve);
    expect(await webhooks.post(`http://mixed.example:${port}/c`, { ...post, signal: signal() })).toBe(202);
    expect(received.map((r) => r.url)).toEqual(['/c']);
  });

  it('refuses literal loopback and private addresses without resolving anything, and URLs that are not http(s)', async () => {
    const dns = resolver(['127.0.0.1']);
    const webhooks = new OutgoingWebhooks(new WebhookTargets(), dns.resolve);
    for (const url of [`http://127.0.0.1:${port}/d`, `http://[::1]:${port}/d`, `http://0x7f.1:${port}/d`, `http://[::ffff:7f00:1]:${port}/d`, 'ftp://example.com/d']) {
      await expect(webhooks.post(url, { ...post, signal: signal() })).rejects.toThrow(WebhookTargetRefused);
    }
    expect(dns.calls).toEqual([]);
    expect(received).toEqual([]);
  });
});

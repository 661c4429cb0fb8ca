import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { EventChannel, WireEvent, writeAllQueued } from '../../shared/subscriptions/event-channel';
import type { AccessTokenVerifier } from '../instances/authentication/access-token';
import { SubscriptionRoutes } from './subscription-routes';
import { Access } from '../roles/access-rules';
import { WebSocketBridge } from './websocket-bridge.transport';
import { SubscriptionCaps } from './subscription-caps';
import { loadConfig } from '../../config/config';
import { eventually } from '../../../test/support/waiting';

/**
 * The bridge writes event frames itself (built once per event and subscription id, straight
 * to the socket under ws): a real ws client, which checks every frame it parses, must read
 * them exactly as ws.send would have framed them — lengths under 126, under 65,536 and above,
 * UTF-8 text, several frames in one write — in order and with the end of stream last.
 */
describe('WebSocketBridge event frames, read by a real ws client', () => {
  let server: Server;
  let bridge: WebSocketBridge;
  let url: string;
  /** The channels opened so far, by the `name` segment of their path. */
  const opened = new Map<string, EventChannel[]>();
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    // Only public routes are served here: the verifier is never asked.
    const routes = new SubscriptionRoutes(undefined as unknown as AccessTokenVerifier, new SubscriptionCaps(loadConfig({}).subscriptionCaps));
    routes.register('/test/:name', Access.public, async (context, channel) => {
      const list = opened.get(context.params.name) ?? [];
      list.push(channel);
      opened.set(context.params.name, list);
    });
    bridge = new WebSocketBridge(routes);
    server = createServer();
    bridge.attach(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
  });

  afterAll(async () => {
    for (const ws of sockets) ws.terminate();
    await bridge.close();
    await new Promise((resolve) => server.close(resolve));
  });

  /** A client socket and every frame it received, parsed. */
  const connect = async () => {
    const ws = new WebSocket(url);
    sockets.push(ws);
    const frames: unknown[][] = [];
    ws.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      frames.push(JSON.parse(String(data)) as unknown[]);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return { ws, frames };
  };

  /** Subscribes `subId` to /test/<name> and resolves with the server's channel once the client has the open frame. */
  const subscribe = async (client: { ws: WebSocket; frames: unknown[][] }, subId: number, name: string) => {
    const before = opened.get(name)?.length ?? 0;
    client.ws.send(JSON.stringify([100, subId, `/test/${name}`, {}]));
    await until(() => client.frames.some((f) => f[0] === 101 && f[1] === subId));
    return opened.get(name)![before];
  };

  const until = (condition: () => boolean) => eventually(condition, { timeoutMs: 5_000, everyMs: 5 });

  it('frames events of every length class and UTF-8 text as ws would, in order, the end of stream last', async () => {
    const client = await connect();
    const channel = await subscribe(client, 3, 'sizes');
    const bodies = ['s', 'x'.repeat(300), 'y'.repeat(70_000), 'héllo wörld — 你好 🎉'.repeat(20)];
    // Pushed within one turn: they leave in one write.
    bodies.forEach((body, i) => channel.push({ id: String(i + 1), body: { text: body } }));
    channel.end(503, { error: 'unavailable/test', error_description: 'ended' });
    await until(() => client.frames.some((f) => f[0] === 199));
    expect(client.frames.slice(1)).toEqual([
      ...bodies.map((body, i) => [102, 3, String(i + 1), {}, { text: body }]),
      [199, 3, 503, {}, { error: 'unavailable/test', error_description: 'ended' }],
    ]);
  });

  it('sends one shared event to subscriptions of different ids and sockets, each with its own id', async () => {
    const [a, b] = [await connect(), await connect()];
    const channels = [await subscribe(a, 0, 'shared'), await subscribe(a, 7, 'shared'), await subscribe(b, 123456, 'shared')];
    const shared: WireEvent = { id: '42', body: { event_name: 'new_message', data: { text: 'to all' } }, headers: { a: 'b' }, shared: true };
    for (const channel of channels) channel.push(shared);
    for (const channel of channels) channel.push({ ...shared, id: '43' }); // a second event, not shared
    await until(() => a.frames.length === 6 && b.frames.length === 3);
    const events = (frames: unknown[][]) => frames.filter((f) => f[0] === 102);
    expect(events(a.frames)).toEqual([
      [102, 0, '42', { a: 'b' }, shared.body],
      [102, 7, '42', { a: 'b' }, shared.body],
      [102, 0, '43', { a: 'b' }, shared.body],
      [102, 7, '43', { a: 'b' }, shared.body],
    ]);
    expect(events(b.frames)).toEqual([
      [102, 123456, '42', { a: 'b' }, shared.body],
      [102, 123456, '43', { a: 'b' }, shared.body],
    ]);
  });

  it('keeps frames in order while ws itself has a frame pending (its Sender busy reading a Blob)', async () => {
    const client = await connect();
    const channel = await subscribe(client, 1, 'busy');
    // The server's end of this client's socket: the newest it accepted.
    const serverSocket = [...(bridge as unknown as { wss: { clients: Set<WebSocket> } }).wss.clients].at(-1)!;
    serverSocket.send(new Blob([JSON.stringify([102, 1, 'blob', {}, 'first'])]), { binary: false });
    // Until ws has read the Blob, its Sender queues: the bridge must queue behind it, not write past it.
    expect((serverSocket as unknown as { _sender: { _state: number } })._sender._state).not.toBe(0);
    channel.push({ id: 'a', body: 'second' });
    channel.push({ id: 'b', body: 'third' });
    writeAllQueued(); // now, while the Blob is still being read
    await until(() => client.frames.length === 4);
    expect(client.frames.slice(1).map((f) => f[4])).toEqual(['first', 'second', 'third']);
  });
});

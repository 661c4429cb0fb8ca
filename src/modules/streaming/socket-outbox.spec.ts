import { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { FrameQueue } from '../../../test/support/subscribe-client';
import { MAX_UNSENT_BYTES, writeAllQueued } from '../../shared/subscriptions/event-channel';
import { idleSocketOf, SocketOutbox } from './socket-outbox';
import { textFrame } from './ws-frames';

/** The private fields of a ws connection that SocketOutbox reads (see `WsInternals`). */
interface Internals {
  _socket: Socket;
  _sender: { _socket: unknown; _state: number; _queue: unknown[]; _firstFragment: boolean };
}
const internalsOf = (ws: WebSocket) => ws as unknown as Internals;

/** Whether the outbox would write to the socket under ws now, rather than hand its frames to ws.send. */
const writesStraight = (ws: WebSocket) => idleSocketOf(ws) === internalsOf(ws)._socket;

/** A real connection over loopback: the server's end, and every text message its client received, in order. */
interface Connection {
  readonly server: WebSocket;
  readonly client: WebSocket;
  readonly received: FrameQueue<string>;
  /** The next `count` messages the client receives. */
  next(count: number): Promise<string[]>;
}

const servers: WebSocketServer[] = [];
const clients: WebSocket[] = [];

async function listen(options: { perMessageDeflate?: boolean | { threshold: number } } = {}): Promise<WebSocketServer> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, ...options });
  servers.push(wss);
  await new Promise((resolve) => wss.once('listening', resolve));
  return wss;
}

async function connect(wss: WebSocketServer): Promise<Connection> {
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  clients.push(client);
  const received = new FrameQueue<string>();
  client.on('message', (data, isBinary) => received.push(isBinary ? `binary:${String(data)}` : String(data)));
  client.on('close', () => received.end(new Error('The socket closed')));
  await new Promise((resolve, reject) => client.once('open', resolve).once('error', reject));
  const server = await accepted;
  server.on('error', () => undefined);
  const next = async (count: number) => {
    const messages: string[] = [];
    while (messages.length < count) messages.push(await received.next(5_000));
    return messages;
  };
  return { server, client, received, next };
}

afterAll(async () => {
  for (const client of clients) client.terminate();
  await Promise.all(servers.map((wss) => new Promise((resolve) => wss.close(resolve))));
});

const frameOf = (text: string) => textFrame('', Buffer.from(text));

/**
 * SocketOutbox writes past ws, through fields ws does not publish (package.json pins `ws` to
 * `~8.23` for this). These tests check those fields and what they mean on real connections,
 * so that a ws upgrade that renames, removes or changes them fails here rather than in
 * production, where frames would go out of order or inside another message.
 */
describe('the ws internals SocketOutbox relies on', () => {
  let plain: WebSocketServer;
  let compressing: WebSocketServer;

  beforeAll(async () => {
    plain = await listen();
    compressing = await listen({ perMessageDeflate: { threshold: 0 } });
  });

  it('keeps the connection’s socket in _socket, which its Sender (_sender) writes to, and an idle Sender’s state', async () => {
    const { server, next } = await connect(plain);
    const { _socket: socket, _sender: sender } = internalsOf(server);
    expect(socket).toBeInstanceOf(Socket);
    expect(sender._socket).toBe(socket);
    expect(sender._state).toBe(0);
    expect(sender._queue).toEqual([]);
    expect(sender._firstFragment).toBe(true);
    expect(writesStraight(server)).toBe(true);
    // A whole frame written to that socket reaches the client as one message: nothing sits between them.
    socket.write(frameOf('straight to the socket'));
    server.send('then through ws');
    expect(await next(2)).toEqual(['straight to the socket', 'then through ws']);
  });

  it('sets _state while the Sender reads a Blob, and queues sends behind it in _queue, until it is done', async () => {
    const { server, next } = await connect(plain);
    const sender = internalsOf(server)._sender;
    server.send(new Blob(['from a blob']), { binary: false });
    expect(sender._state).not.toBe(0);
    server.send('queued behind it');
    expect(sender._queue).toHaveLength(1);
    expect(writesStraight(server)).toBe(false);
    expect(await next(2)).toEqual(['from a blob', 'queued behind it']);
    expect(sender._state).toBe(0);
    expect(sender._queue).toEqual([]);
    expect(writesStraight(server)).toBe(true);
  });

  it('sets _state while the Sender compresses a message, until it is sent', async () => {
    const { server, next } = await connect(compressing);
    const sender = internalsOf(server)._sender;
    server.send('compressed '.repeat(100));
    expect(sender._state).not.toBe(0);
    expect(writesStraight(server)).toBe(false);
    expect(await next(1)).toEqual(['compressed '.repeat(100)]);
    expect(sender._state).toBe(0);
    expect(writesStraight(server)).toBe(true);
  });

  it('clears _firstFragment while a fragmented message is open, and sets it again with its last fragment', async () => {
    const { server, next } = await connect(plain);
    const sender = internalsOf(server)._sender;
    server.send('first half, ', { fin: false });
    expect(sender._firstFragment).toBe(false);
    expect(writesStraight(server)).toBe(false);
    server.send('second half', { fin: true });
    expect(sender._firstFragment).toBe(true);
    expect(await next(1)).toEqual(['first half, second half']);
    expect(writesStraight(server)).toBe(true);
  });
});

describe('SocketOutbox', () => {
  let plain: WebSocketServer;
  let compressing: WebSocketServer;

  beforeAll(async () => {
    plain = await listen();
    compressing = await listen({ perMessageDeflate: { threshold: 0 } });
  });

  const texts = ['s', 'x'.repeat(300), 'y'.repeat(70_000), 'héllo wörld — 你好 🎉'.repeat(20)];

  it('writes the frames queued in one turn straight to the socket, in one write, intact and in order', async () => {
    const { server, next } = await connect(plain);
    const write = jest.spyOn(internalsOf(server)._socket, 'write');
    const send = jest.spyOn(server, 'send');
    const outbox = new SocketOutbox(server);
    for (const text of texts) outbox.push(frameOf(text));
    expect(await next(texts.length)).toEqual(texts);
    expect(write).toHaveBeenCalledTimes(1);
    expect(send).not.toHaveBeenCalled();
  });

  it('sends through ws, after what ws is still sending, while its Sender reads a Blob', async () => {
    const { server, next } = await connect(plain);
    const send = jest.spyOn(server, 'send');
    const outbox = new SocketOutbox(server);
    server.send(new Blob(['from a blob']), { binary: false });
    for (const text of texts) outbox.push(frameOf(text));
    writeAllQueued(); // now, while ws still reads the Blob
    expect(send).toHaveBeenCalledTimes(1 + texts.length);
    expect(await next(1 + texts.length)).toEqual(['from a blob', ...texts]);
  });

  it('sends through ws, after the message ws is compressing, on a compressed connection', async () => {
    const { server, next } = await connect(compressing);
    const outbox = new SocketOutbox(server);
    server.send('compressed '.repeat(100));
    for (const text of texts) outbox.push(frameOf(text));
    writeAllQueued(); // now, while ws still compresses
    expect(await next(1 + texts.length)).toEqual(['compressed '.repeat(100), ...texts]);
    // Idle again: straight to the socket, uncompressed, which a compressed connection allows (RFC 7692 §6).
    outbox.push(frameOf('after'));
    expect(await next(1)).toEqual(['after']);
  });

  it(`lets a client go that stopped reading once more than ${MAX_UNSENT_BYTES} bytes wait for it`, async () => {
    const { server, client } = await connect(plain);
    client.pause(); // reads nothing more
    const outbox = new SocketOutbox(server);
    const megabyte = frameOf('z'.repeat(1024 * 1024));
    const closed = new Promise((resolve) => server.once('close', resolve));
    let pushed = 0;
    // A megabyte per turn of the event loop, each turn's frames written in it: what the socket cannot take waits in ws.
    while (server.readyState === WebSocket.OPEN && pushed < 16 * MAX_UNSENT_BYTES) {
      outbox.push(megabyte);
      pushed += megabyte.length;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await closed;
    expect(pushed).toBeGreaterThan(MAX_UNSENT_BYTES);
    expect(pushed).toBeLessThan(16 * MAX_UNSENT_BYTES);
  });
});

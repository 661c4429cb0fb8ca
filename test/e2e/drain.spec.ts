import PushNotifications from '@pusher/push-notifications-server';
import jwt from 'jsonwebtoken';
import { Agent, request } from 'node:http';
import { connect, Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, ServerProcess } from '../support/server-process';
import { openHttpSubscription, openWsSubscription } from '../support/subscribe-client';

/**
 * Graceful drain on SIGTERM/SIGINT, against the built server as a child process: requests in
 * flight get their real answers, new ones a truthful 503, streams an end-of-stream the SDKs
 * reconnect on, and the process exits 0 (or 1 past SHUTDOWN_TIMEOUT_MS).
 */
const instance = 'drain';
const secret = 'drain-secret';
const env = (dataDir: string, extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  INSTANCE_LOCATOR: `v1:local:${instance}`,
  INSTANCE_KEY: `k:${secret}`,
  ...extra,
});
const token = (sub?: string) =>
  jwt.sign({ instance, iss: 'api_keys/k', su: true, ...(sub && { sub }) }, secret, { algorithm: 'HS256', expiresIn: 600 });
const chat = (path: string) => `/services/chatkit/v6/${instance}${path}`;
const SHUTTING_DOWN = 'services/chatkit/unavailable/shutting_down';

/** How one request ended: a whole answer, or a connection error before any answer began. */
type Outcome =
  | { readonly kind: 'answered'; readonly status: number; readonly body: any; readonly afterSignal: boolean }
  | { readonly kind: 'not answered'; readonly error: string }
  | { readonly kind: 'cut'; readonly error: string };

/** Sends one request and reports how it ended; an answer whose body breaks off or is not JSON is 'cut'. */
function send(port: number, agent: Agent, method: string, path: string, body?: unknown, signalled = () => false): Promise<Outcome> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: { authorization: `Bearer ${token()}`, ...(payload && { 'content-type': 'application/json' }) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', (error) => resolve({ kind: 'cut', error: error.message }));
        res.on('aborted', () => resolve({ kind: 'cut', error: 'aborted' }));
        res.on('end', () => {
          try {
            resolve({ kind: 'answered', status: res.statusCode!, body: JSON.parse(text), afterSignal: signalled() });
          } catch {
            resolve({ kind: 'cut', error: `not JSON: ${text}` });
          }
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'not answered', error: error.code ?? error.message }));
    req.end(payload);
  });
}

const exitOf = (process: ServerProcess) =>
  new Promise<number | null>((resolve) => {
    if (process.child.exitCode !== null) return resolve(process.child.exitCode);
    process.child.once('exit', (code) => resolve(code));
  });

/** Starts `POST /users` with `Expect: 100-continue` and half its body: resolves once the server has taken the request. */
function startStalledCreate(port: number, id: string): Promise<{ finish(): Promise<{ status: number; body: any }>; socket: Socket }> {
  const body = JSON.stringify({ id, name: id });
  const half = Math.floor(body.length / 2);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let answer: ((r: { status: number; body: any }) => void) | null = null;
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.startsWith('HTTP/1.1 100')) {
        // The server read the headers and handed the request to the app: it is in flight.
        received = received.slice(received.indexOf('\r\n\r\n') + 4);
        socket.write(body.slice(0, half));
        resolve({
          socket,
          finish: () =>
            new Promise((done) => {
              answer = done;
              socket.write(body.slice(half));
            }),
        });
      }
    });
    socket.on('end', () => {
      const [head, text] = received.split('\r\n\r\n');
      answer?.({ status: Number(head.split(' ')[1]), body: JSON.parse(text) });
    });
    socket.write(
      `POST ${chat('/users')} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token()}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\nexpect: 100-continue\r\n\r\n`,
    );
  });
}

describe('graceful drain on SIGTERM', () => {
  const dirs: string[] = [];
  const running: ServerProcess[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'parley-drain-'));
    dirs.push(d);
    return d;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.stop('SIGKILL')));
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('answers every request in flight, keeps every 201, ends open streams with a 503 EOS, and exits 0', async () => {
    const dir = dataDir();
    const server = await startProcess('dist/src/main.js', env(dir));
    running.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    const setup = new Agent({ keepAlive: true });
    expect(await send(server.port, setup, 'POST', chat('/users'), { id: 'watcher', name: 'watcher' })).toMatchObject({ status: 201 });
    setup.destroy();

    const stream = await openHttpSubscription(`${base}${chat('/users')}`, { authorization: `Bearer ${token('watcher')}` });
    expect(stream.status).toBe(200);
    const ws = await openWsSubscription(base, chat('/users'), { Authorization: `Bearer ${token('watcher')}` }, 7);
    expect(ws.status).toBe(200);

    // Concurrent writers on keep-alive connections, each sending until the server stops answering 201.
    let signalled = false;
    let created = 0;
    let reachedLoad!: () => void;
    const loaded = new Promise<void>((resolve) => (reachedLoad = resolve));
    const outcomes = new Map<string, Outcome>();
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    const writer = async (w: number) => {
      for (let i = 0; ; i++) {
        const id = `w${w}-${i}`;
        const outcome = await send(server.port, agent, 'POST', chat('/users'), { id, name: `name of ${id}` }, () => signalled);
        outcomes.set(id, outcome);
        if (outcome.kind !== 'answered' || outcome.status !== 201) return;
        if (++created === 300) reachedLoad();
      }
    };
    const writers = Promise.all(Array.from({ length: 32 }, (_, w) => writer(w)));
    await loaded;
    const exited = exitOf(server);
    signalled = true;
    server.child.kill('SIGTERM');
    await writers;
    expect(await exited).toBe(0);
    agent.destroy();

    const all = [...outcomes.entries()];
    // Every request got a whole answer, or none at all (refused before the server read it).
    expect(all.filter(([, o]) => o.kind === 'cut')).toEqual([]);
    const answered = all.filter(([, o]) => o.kind === 'answered') as [string, Extract<Outcome, { kind: 'answered' }>][];
    const stored = answered.filter(([, o]) => o.status === 201).map(([id]) => id);
    const refused = answered.filter(([, o]) => o.status !== 201);
    for (const [, o] of refused) expect({ status: o.status, error: o.body.error }).toEqual({ status: 503, error: SHUTTING_DOWN });
    const unanswered = all.filter(([, o]) => o.kind === 'not answered').map(([id]) => id);
    // Requests in flight at the signal were answered, not cut: some 201s arrived after it.
    expect(answered.some(([, o]) => o.status === 201 && o.afterSignal)).toBe(true);

    // Both kinds of stream ended with a 503 end-of-stream, which the SDKs retry.
    const frames: unknown[] = [];
    for (;;) {
      const frame = await stream.next().catch(() => null);
      if (!frame) break;
      if (frame[0] !== 0) frames.push(frame);
    }
    expect(frames.at(-1)).toEqual([255, 503, {}, expect.objectContaining({ error: SHUTTING_DOWN })]);
    const wsFrames: unknown[][] = [];
    for (;;) {
      const frame = await ws.next().catch(() => null);
      if (!frame) break;
      wsFrames.push(frame);
    }
    expect(wsFrames.at(-1)).toEqual([199, 7, 503, {}, expect.objectContaining({ error: SHUTTING_DOWN })]);
    await stream.close();
    await ws.close();

    // After a restart: every 201 is there with its content; nothing refused or unanswered was stored.
    const again = await startProcess('dist/src/main.js', env(dir));
    running.push(again);
    const readAgent = new Agent({ keepAlive: true });
    const ids = [...stored, ...refused.map(([id]) => id), ...unanswered];
    const found = new Map<string, string>();
    for (let i = 0; i < ids.length; i += 400) {
      const query = ids.slice(i, i + 400).map((id) => `id=${encodeURIComponent(id)}`).join('&');
      const page = await send(again.port, readAgent, 'GET', chat(`/users_by_ids?${query}`));
      expect(page).toMatchObject({ kind: 'answered', status: 200 });
      for (const user of (page as { body: { id: string; name: string }[] }).body) found.set(user.id, user.name);
    }
    readAgent.destroy();
    expect(stored.filter((id) => found.get(id) !== `name of ${id}`)).toEqual([]);
    expect([...refused.map(([id]) => id), ...unanswered].filter((id) => found.has(id))).toEqual([]);
    expect(stored.length).toBeGreaterThanOrEqual(300);
  }, 60_000);

  it('finishes a request still arriving when the signal comes, saying 503 on /health and to new requests meanwhile', async () => {
    const dir = dataDir();
    const server = await startProcess('dist/src/main.js', env(dir));
    running.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    const stalled = await startStalledCreate(server.port, 'slow');
    const exited = exitOf(server);
    server.child.kill('SIGTERM');

    // Draining: readiness says 503 'stopping', liveness still answers, new requests are refused.
    let health: { status: number; body: { status: string } };
    do {
      const response = await fetch(`${base}/health`);
      health = { status: response.status, body: await response.json() };
    } while (health.body.status !== 'stopping'); // until the process has taken the signal
    expect(health.status).toBe(503);
    expect((await fetch(`${base}/health/live`)).status).toBe(200);
    const refused = await fetch(`${base}${chat('/users')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'late', name: 'late' }),
    });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({
      error: SHUTTING_DOWN,
      error_description: expect.stringContaining('nothing was changed'),
    });
    // The Beams server SDK reads `{error, description}` only ("Could not parse response body" otherwise).
    const beams = new PushNotifications({ instanceId: instance, secretKey: secret, endpoint: '127.0.0.1', port: server.port } as any);
    await expect(beams.publishToInterests(['late'], { web: { notification: { title: 'late' } } } as any)).rejects.toThrow(
      /^503 unavailable\/shutting_down - .*nothing was changed/,
    );

    // The request that was in flight gets its real answer, then the process exits 0.
    expect(await stalled.finish()).toMatchObject({ status: 201, body: { id: 'slow', name: 'slow' } });
    expect(await exited).toBe(0);

    const again = await startProcess('dist/src/main.js', env(dir));
    running.push(again);
    const agent = new Agent();
    expect(await send(again.port, agent, 'GET', chat('/users/slow'))).toMatchObject({ status: 200, body: { name: 'slow' } });
    expect(await send(again.port, agent, 'GET', chat('/users/late'))).toMatchObject({ status: 404 });
  }, 60_000);

  it('does not tell presence watchers that the users registered here went offline: they are about to reconnect', async () => {
    const server = await startProcess('dist/src/main.js', env(dataDir()));
    running.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    const agent = new Agent();
    for (const id of ['alice', 'bob']) expect(await send(server.port, agent, 'POST', chat('/users'), { id, name: id })).toMatchObject({ status: 201 });
    agent.destroy();
    const presence = (path: string) => `/services/chatkit_presence/v2/${instance}${path}`;
    // Bob's register stream is ended before Alice's watch of him (HTTP streams end before the /ws ones).
    const register = await openHttpSubscription(`${base}${presence('/users/bob/register')}`, { authorization: `Bearer ${token('bob')}` });
    expect(register.status).toBe(200);
    const watch = await openWsSubscription(base, presence('/users/bob'), { Authorization: `Bearer ${token('alice')}` }, 3);
    expect((await watch.nextEvent()).body).toMatchObject({ event_name: 'presence_state', data: { state: 'online' } });

    const exited = exitOf(server);
    server.child.kill('SIGTERM');
    const frames: unknown[][] = [];
    for (;;) {
      const frame = await watch.next().catch(() => null);
      if (!frame) break;
      frames.push(frame);
    }
    expect(frames).toEqual([[199, 3, 503, {}, expect.objectContaining({ error: 'services/chatkit_presence/unavailable/shutting_down' })]]);
    expect(await exited).toBe(0);
    await Promise.all([register.close(), watch.close()]);
  }, 30_000);

  it('gives up past SHUTDOWN_TIMEOUT_MS (SIGINT too): exits 1 with a line saying so', async () => {
    const server = await startProcess('dist/src/main.js', env(dataDir(), { SHUTDOWN_TIMEOUT_MS: '300' }));
    running.push(server);
    const stalled = await startStalledCreate(server.port, 'never-finished');
    let stderr = '';
    server.child.stderr!.on('data', (d) => (stderr += String(d)));
    const exited = exitOf(server);
    server.child.kill('SIGINT');
    expect(await exited).toBe(1);
    expect(stderr).toContain('Parley did not finish draining within SHUTDOWN_TIMEOUT_MS (300 ms) after SIGINT');
    stalled.socket.destroy();
  }, 30_000);
});

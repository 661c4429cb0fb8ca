import { request } from 'node:http';
import { fillScale } from '../bench/scale';
import { freePort } from '../support/free-port';
import { ServerProcess } from '../support/server-process';
import { eventually, FaultLab, health, INSTANCE, processEnv, tokenFor } from './process-client';
import { sleep } from '../support/waiting';

/**
 * An upgrade to a release that bumps a projection's version (dist/test/support/upgraded-release.js:
 * this release listing users_v1 and users_v2), as an operator runs it on a data directory with
 * enough users that building the new version takes a while. A client writes a user and reads
 * the one it wrote before every 100 ms throughout. The new version builds beside the serving one,
 * which answers reads and acknowledges writes meanwhile; reads then switch to it, and every write
 * acknowledged across the upgrade reads back.
 */

/** The bumped release, run as one of Parley's processes. */
const UPGRADED = 'dist/test/support/upgraded-release.js';
/**
 * Users in the log: enough that building users_v2 outlasts what each test does meanwhile (the
 * embedded server's first requests; the old worker's stop and the new one's takeover, longer).
 */
const USERS = { embedded: 100_000, production: 200_000 };
const TICK_MS = 100;

interface Attempt {
  readonly at: number;
  readonly status: number;
  /** The error's category for an answer, the socket error's code when none came. */
  readonly reason: string;
}

/** One logical request, sent until it has an answer the client may rely on. */
interface Call {
  readonly attempts: readonly Attempt[];
  readonly ok: boolean;
}

interface Tick {
  readonly n: number;
  readonly write: Call;
  readonly read: Call | null;
  /** The role /health gave users_v2 just after both calls (null: no answer). */
  readonly usersV2Role: string | null;
}

/** One HTTP exchange on a connection of its own, so that a restart never cuts a request on a reused socket. */
function exchange(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; code?: string }> {
  return new Promise((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: `/services/chatkit/v6/${INSTANCE}${path}`,
        agent: false,
        headers: { authorization: `Bearer ${tokenFor({ su: true })}`, ...(payload && { 'content-type': 'application/json' }) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: null, code: error.code ?? 'ERR' }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: null, code: error.code ?? 'ERR' }));
    req.end(payload);
  });
}

/** What Parley says was not handled (send it again): a restarting server's refusals. */
const NOT_HANDLED = /\/unavailable\/(starting|shutting_down)$/;

/**
 * Sends a request until it has an answer to rely on, as a careful client does: a refused
 * connection and a 503 saying nothing was done are sent again; so is a write whose connection
 * broke before its answer, which then counts as stored if its user already exists.
 */
async function call(port: () => number, method: string, path: string, body: unknown, expected: number): Promise<Call> {
  const attempts: Attempt[] = [];
  let unknownOutcome = false;
  for (let i = 0; i < 200; i++) {
    const answer = await exchange(port(), method, path, body);
    const reason = answer.code ?? (answer.status >= 400 ? String(answer.body?.error ?? answer.status) : 'ok');
    attempts.push({ at: Date.now(), status: answer.status, reason });
    if (answer.status === expected) return { attempts, ok: true };
    if (unknownOutcome && method === 'POST' && answer.status === 409) return { attempts, ok: true };
    const refused = answer.code === 'ECONNREFUSED' || (answer.status === 503 && NOT_HANDLED.test(reason));
    const broken = answer.status === 0 && !refused;
    if (!refused && !broken) return { attempts, ok: false };
    if (broken) unknownOutcome = true;
    await sleep(TICK_MS);
  }
  return { attempts, ok: false };
}

/** Which role /health gives a projection now (`serving` when it names none; null when no answer came). */
async function roleOn(port: number, projection: string): Promise<string | null> {
  const answer = await health(port);
  const reported = answer.body?.projections?.[projection];
  return reported ? (reported.role ?? 'serving') : null;
}

/**
 * A write and a read every 100 ms, through whichever API processes are in rotation (a load
 * balancer's: the test takes a process out before stopping it).
 */
class Traffic {
  readonly ticks: Tick[] = [];
  readonly written: string[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(readonly rotation: number[]) {
    this.done = this.run();
  }

  private port(n: number): number {
    return this.rotation[n % this.rotation.length];
  }

  private async run(): Promise<void> {
    for (let n = 0; this.running; n++) {
      const started = Date.now();
      const id = `upgrade-${n}`;
      const write = await call(() => this.port(n), 'POST', '/users', { id, name: `Upgrade ${n}` }, 201);
      // The user written before, read through another process where there are several.
      const previous = this.written[this.written.length - 1];
      const read = previous === undefined ? null : await call(() => this.port(n + 1), 'GET', `/users/${previous}`, undefined, 200);
      if (write.ok) this.written.push(id);
      this.ticks.push({ n, write, read, usersV2Role: await roleOn(this.port(n), 'users_v2') });
      await sleep(Math.max(0, TICK_MS - (Date.now() - started)));
    }
  }

  /** Resolves once `count` more ticks have run. */
  async more(count: number): Promise<void> {
    const target = this.ticks.length + count;
    expect(await eventually(async () => this.ticks.length >= target, 60_000, 20)).toBe(true);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** Ticks whose write or read did not end in an answer the client could rely on. */
  get failed(): Tick[] {
    return this.ticks.filter((t) => !t.write.ok || (t.read && !t.read.ok));
  }

  /** Every attempt that was not answered at once, with when it happened. */
  get retried(): Attempt[] {
    return this.ticks.flatMap((t) => [...t.write.attempts.slice(0, -1), ...(t.read?.attempts.slice(0, -1) ?? [])]);
  }

  /** Ticks whose write and read were answered while users_v2 was still building (by /health just after). */
  get servedWhileBuilding(): Tick[] {
    return this.ticks.filter((t) => t.usersV2Role === 'building' && t.write.ok && t.read?.ok);
  }
}

describe('upgrading to a release that bumps a projection version, under reads and writes every 100 ms', () => {
  const lab = new FaultLab();
  afterEach(() => lab.stopAll());
  afterAll(() => lab.cleanUp());

  /** A data directory whose log holds this many users in another instance: the bumped version folds them all. */
  const manyUsers = async (users: number) => {
    const dataDir = lab.dataDir();
    await fillScale(dataDir, { instanceId: 'elsewhere', roomId: 'long', emptyRoomId: 'empty', users, messages: 1_000, senders: 2 }, () => undefined);
    return dataDir;
  };

  /** Resolves once users_v2 serves reads on this process and users_v1 is retired. */
  const switched = async (port: number) => {
    const roles = async () => [await roleOn(port, 'users_v1'), await roleOn(port, 'users_v2')].join(' ');
    expect(await eventually(async () => (await roles()) === 'retired serving', 120_000, 200)).toBe(true);
  };

  /** Every write acknowledged across the upgrade reads back, through each process. */
  const everyWriteReadsBack = async (traffic: Traffic, ports: readonly number[]) => {
    for (const port of ports) {
      const missing: string[] = [];
      for (const id of traffic.written) {
        const { status } = await exchange(port, 'GET', `/users/${id}`);
        if (status !== 200) missing.push(`${id}: ${status}`);
      }
      expect(missing).toEqual([]);
    }
  };

  it('embedded: a restart onto the new release serves from the old version while the new one builds, then switches', async () => {
    const port = await freePort();
    const env = processEnv(await manyUsers(USERS.embedded), { PORT: String(port) });
    let server: ServerProcess = await lab.start('dist/src/main.js', env);
    const traffic = new Traffic([port]);
    await traffic.more(5);

    // The operator's restart: stop the old release, start the new one on the same data directory.
    const stoppedAt = Date.now();
    await server.stop();
    server = await lab.start(UPGRADED, env, undefined, { args: ['embedded'] });
    const listeningAt = Date.now();
    await switched(port);
    await traffic.more(5);
    await traffic.stop();

    expect(traffic.failed).toEqual([]);
    // Only the restart itself was refused (a closed port, or 503 "nothing was changed" while the
    // old release drained and the new one opened its stores); from the moment the new release
    // listened, through the whole build, every request was answered at once.
    expect(traffic.retried.filter((a) => a.at < stoppedAt || a.at > listeningAt)).toEqual([]);
    expect(traffic.servedWhileBuilding.length).toBeGreaterThan(0);
    await everyWriteReadsBack(traffic, [port]);
    await server.stop();
  }, 240_000);

  it('production: API processes rolled one by one and the worker replaced serve throughout, from the old version while the new one builds', async () => {
    const env = processEnv(await manyUsers(USERS.production), { PROJECTION_LEASE_TTL_MS: '1000' });
    const oldWorker = await lab.startWorker(env);
    const apis = [await lab.start('dist/src/main.api.js', env), await lab.start('dist/src/main.api.js', env)];
    expect(await eventually(async () => (await health(apis[0].port)).status === 200, 120_000, 200)).toBe(true);
    const traffic = new Traffic(apis.map((a) => a.port));
    await traffic.more(5);

    // Roll the API processes: each leaves the rotation, stops, and its successor joins once ready.
    for (let i = 0; i < apis.length; i++) {
      traffic.rotation.splice(traffic.rotation.indexOf(apis[i].port), 1);
      await apis[i].stop();
      apis[i] = await lab.start(UPGRADED, env, undefined, { args: ['api'] });
      expect(await eventually(async () => (await health(apis[i].port)).status === 200, 60_000, 100)).toBe(true);
      traffic.rotation.push(apis[i].port);
      await traffic.more(3);
    }
    // Replace the worker: the new one starts beside the old (taking the free users_v2 and building
    // it); the old one stops and the new one takes its projections over while users_v2 builds.
    await lab.start(UPGRADED, env, /projector worker running/, { args: ['projector'] });
    await oldWorker.stop();
    const oldWorkerGoneAt = Date.now();
    await switched(apis[0].port);
    await switched(apis[1].port);
    await traffic.more(5);
    await traffic.stop();

    expect(traffic.failed).toEqual([]);
    expect(traffic.retried).toEqual([]);
    // Writes were acknowledged by the new worker's serving versions while it still built users_v2.
    expect(traffic.servedWhileBuilding.filter((t) => t.write.attempts[0].at > oldWorkerGoneAt).length).toBeGreaterThan(0);
    await everyWriteReadsBack(
      traffic,
      apis.map((a) => a.port),
    );
  }, 300_000);
});

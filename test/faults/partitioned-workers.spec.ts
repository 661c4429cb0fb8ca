import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../../src/adapters/read-models/sqlite/sqlite-read-model-store';
import { openSqliteReadModels } from '../../src/infrastructure/sqlite-read-models';
import { ALL_PROJECTIONS } from '../../projections';
import { dumpReadModels } from '../support/read-model-dump';
import { runToExit, ServerProcess } from '../support/server-process';
import { chat, eventually, FaultLab, health, INSTANCE, processEnv, tokenFor } from './process-client';

const ROOMS = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'];

/**
 * Several projector worker processes share the projections split in partitions
 * (PROJECTOR_PARTITIONS) on one SQLite data directory, beside an API process, while workers
 * are killed (`kill -9`) and started under writes. The read models they leave are then
 * compared, document by document with the position each reflects, with a single rebuild of
 * the same log: an event folded twice or skipped by a partition would show.
 */
describe('projector workers sharing partitions on one SQLite data directory (real processes, kill -9)', () => {
  const lab = new FaultLab();
  afterEach(() => lab.stopAll());
  afterAll(() => lab.cleanUp());

  it('folds every write exactly as one worker would, whichever workers die and start meanwhile', async () => {
    const dir = lab.dataDir();
    const env = processEnv(dir, { PROJECTION_LEASE_TTL_MS: '1000', PROJECTOR_PARTITIONS: '4', READ_YOUR_WRITES_TIMEOUT_MS: '30000' });
    const workers: ServerProcess[] = [];
    for (let n = 0; n < 3; n++) workers.push(await lab.startWorker(env));
    const api = await lab.start('dist/src/main.api.js', env);

    for (const id of ['ann', 'bob']) expect((await chat(api.port, 'POST', '/users', { id, name: id })).status).toBe(201);
    for (const id of ROOMS) expect((await chat(api.port, 'POST', '/rooms', { id, name: id, user_ids: ['ann', 'bob'] })).status).toBe(201);

    let bobDeleted = false;
    const acknowledged = new Map<string, string[]>(ROOMS.map((room) => [room, []]));
    const send = async (n: number) => {
      // After the deletions, r5 is gone: the last writes go to the others.
      const rooms = bobDeleted ? ROOMS.slice(0, -1) : ROOMS;
      const room = rooms[n % rooms.length];
      const text = `message ${n}`;
      const answer = await chat(api.port, 'POST', `/rooms/${room}/messages`, { text }, { sub: n % 2 || bobDeleted ? 'ann' : 'bob', version: 'v2' });
      expect(answer.status).toBe(201);
      acknowledged.get(room)!.push(text);
      return answer.body.message_id as number;
    };
    const setCursor = async (room: string, position: number) =>
      (
        await fetch(`http://127.0.0.1:${api.port}/services/chatkit_cursors/v2/${INSTANCE}/cursors/0/rooms/${room}/users/ann`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${tokenFor({ sub: 'ann' })}`, 'content-type': 'application/json' },
          body: JSON.stringify({ position }),
        })
      ).status;
    // Writes go on while workers are killed and started: every 201 waited for the projections to fold it.
    let n = 0;
    const burst = async (count: number) => {
      for (const end = n + count; n < end; n++) {
        const id = await send(n);
        if (n % 10 === 3) expect(await setCursor(ROOMS[n % (ROOMS.length - 1)], id)).toBeLessThan(300);
      }
    };
    await burst(20);
    // The three workers share the partitions of one projection (each its fair share of all the parts).
    const leases = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    try {
      const messageParts = [0, 1, 2, 3].map((k) => `messages_v1#${k}/4`);
      const holders = async () => new Set([...(await leases.leases(['messages_v1', ...messageParts])).values()].map((lease) => lease.owner)).size;
      expect(await eventually(async () => (await holders()) >= 2, 15_000)).toBe(true);
      expect(await leases.getCheckpoint('messages_v1')).toBeNull(); // folded by partition, never whole
    } finally {
      await leases.close();
    }
    await workers[0].stop('SIGKILL');
    await burst(20);
    workers.push(await lab.startWorker(env));
    await workers[1].stop('SIGKILL');
    await burst(20);
    await workers[2].stop('SIGKILL');
    await burst(15);
    workers.push(await lab.startWorker(env));
    await burst(15);
    // An event of no room (a user's deletion) is folded by every partition of the projections split by room.
    expect((await chat(api.port, 'DELETE', '/users/bob')).status).toBe(204);
    bobDeleted = true;
    expect((await chat(api.port, 'DELETE', '/rooms/r5')).status).toBe(204);
    await burst(10);

    // What users read: every acknowledged message, once, in order.
    for (const room of ROOMS.slice(0, -1)) {
      const page = await chat(api.port, 'GET', `/rooms/${room}/messages?limit=100`, undefined, { sub: 'ann', version: 'v2' });
      expect(page.status).toBe(200);
      expect(page.body.map((m: { text: string }) => m.text).reverse()).toEqual(acknowledged.get(room));
    }
    // Healthy, and every projection at the log's head (message search folds up to a second behind the others).
    const caughtUp = async () => {
      const answer = await health(api.port);
      return answer.status === 200 && Object.values(answer.body.projections ?? {}).every((p: any) => p.lag_events === 0);
    };
    expect(await eventually(caughtUp, 15_000)).toBe(true);
    await lab.stopAll();

    // The same log rebuilt by one process, from its start, into fresh read models.
    const rebuilt = lab.dataDir();
    // The log and its keys, not the read models (search's index lives in a file of its own).
    const readModelFiles = /^(read-models|search)\.sqlite/;
    for (const file of readdirSync(dir).filter((f) => !readModelFiles.test(f))) cpSync(join(dir, file), join(rebuilt, file), { recursive: true });
    const rebuild = await runToExit('dist/src/cli/rebuild.js', processEnv(rebuilt));
    expect(rebuild).toMatchObject({ code: 0 });

    // Both files of each (read-models.sqlite and search.sqlite), as the server opens them.
    const shared = openSqliteReadModels(dir);
    const single = openSqliteReadModels(rebuilt);
    try {
      const expected = await dumpReadModels(single, ALL_PROJECTIONS);
      expect(expected.messages_v1.length).toBeGreaterThan(80);
      expect(await dumpReadModels(shared, ALL_PROJECTIONS)).toEqual(expected);
    } finally {
      await shared.close();
      await single.close();
    }
  }, 240_000);
});

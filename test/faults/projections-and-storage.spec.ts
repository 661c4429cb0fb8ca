import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite/sqlite-event-store';
import { chat, eventually, FaultLab, health, processEnv } from './process-client';
import { fillVolume, itAsRoot, mountTmpfs } from '../support/volumes';

describe('failing projections and storage (real processes, real files)', () => {
  const lab = new FaultLab();
  afterEach(() => lab.stopAll());
  afterAll(() => lab.cleanUp());

  it('parks only the projection whose evolve keeps failing on an event, names it in /health, and the others go on', async () => {
    const dir = lab.dataDir();
    const server = await lab.start('dist/src/main.js', processEnv(dir, { READ_YOUR_WRITES_TIMEOUT_MS: '1500' }));
    expect((await chat(server.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/rooms', { id: 'still-works', name: 'ok', user_ids: ['ann'] })).status).toBe(201);

    // A malformed event reaches the log (as a bug in an older release could have written it).
    const log = new SqliteEventStore(join(dir, 'events.sqlite'));
    const { position } = await log.append(
      'user-faults.broken',
      [{ type: 'UserCreated', data: null, metadata: { occurred_at: new Date().toISOString() } }],
      'no_stream',
    );
    await log.close();

    let report: any;
    expect(
      await eventually(async () => {
        const answer = await health(server.port);
        report = answer.body;
        return answer.status === 503 && report.projections.users_v1.state === 'parked';
      }, 15_000),
    ).toBe(true);
    expect(report.projections.users_v1.failed_event).toMatchObject({ position, type: 'UserCreated', stream: 'user-faults.broken' });
    expect(report.problems.join(' ')).toMatch(/users_v1 is parked at position/);
    expect(report.projections.rooms_v1.state).toBe('running');

    // The other projections still fold: a message is acknowledged and readable at once.
    const sent = await chat(server.port, 'POST', '/rooms/still-works/messages', { text: 'still here' }, { sub: 'ann', version: 'v2' });
    expect(sent.status).toBe(201);
    const read = await chat(server.port, 'GET', '/rooms/still-works/messages', undefined, { sub: 'ann', version: 'v2' });
    expect(read.body.map((m: { text: string }) => m.text)).toEqual(['still here']);
    const after = (await health(server.port)).body;
    expect(after.projections.messages_v1).toMatchObject({ state: 'running', lag_events: 0 });
    expect(after.projections.users_v1.state).toBe('parked');
    // A user write is kept, and says truthfully that it is not visible yet.
    const user = await chat(server.port, 'POST', '/users', { id: 'bob', name: 'Bob' });
    expect(user.status).toBe(503);
    expect(user.body.error).toMatch(/projection_lag/);
    expect(user.body.error_description).toMatch(/was saved/);
    expect((await fetch(`http://127.0.0.1:${server.port}/health/live`)).status).toBe(200);
  }, 60_000);

  /** Appends an event the users projection cannot fold (as a bug in an older release could have written it). */
  const appendPoison = async (dir: string) => {
    const log = new SqliteEventStore(join(dir, 'events.sqlite'));
    try {
      return await log.append('user-faults.broken', [{ type: 'UserCreated', data: null, metadata: { occurred_at: new Date().toISOString() } }], 'no_stream');
    } finally {
      await log.close();
    }
  };
  const parkedIn = async (port: number, projection: string) =>
    eventually(async () => (await health(port)).body?.projections?.[projection]?.state === 'parked', 15_000);

  /**
   * What users see while users_v1 is parked: writes whose answers do not read it answer as
   * usual; those that do answer at once that the change is saved but not yet readable. The
   * read-your-writes timeout is long, so an answer that waited for it would say so.
   */
  const writesBesideParkedUsers = async (port: number) => {
    const room = await chat(port, 'POST', '/rooms', { id: 'after-park', name: 'after', user_ids: ['ann'] });
    expect(room.status).toBe(201);
    expect(room.body).toMatchObject({ id: 'after-park', member_user_ids: ['ann'] });
    expect((await chat(port, 'GET', '/rooms/after-park', undefined, { sub: 'ann' })).status).toBe(200);
    expect((await chat(port, 'POST', '/rooms/after-park/messages', { text: 'hello' }, { sub: 'ann', version: 'v2' })).status).toBe(201);
    expect((await chat(port, 'PUT', '/rooms/after-park', { name: 'renamed' })).status).toBe(204);

    for (const write of [
      () => chat(port, 'POST', '/users', { id: 'bob', name: 'Bob' }),
      () => chat(port, 'PUT', '/users/ann', { name: 'Ann B' }),
    ]) {
      const answer = await write();
      expect(answer.status).toBe(503);
      expect(answer.body.error).toBe('services/chatkit/unavailable/projection_lag');
      expect(answer.body.error_description).toMatch(/^The change was saved, but it is not yet readable: projection users_v1 stopped on an event it cannot fold/);
      expect(answer.body.error_description).toMatch(/do not send it again/);
    }
  };
  /** "Saved" is true: the refused-as-unreadable writes are in the log. */
  const savedInLog = async (dir: string) => {
    const log = new SqliteEventStore(join(dir, 'events.sqlite'));
    try {
      expect((await log.readStream('user-faults.bob')).map((e) => e.type)).toEqual(['UserCreated']);
      expect((await log.readStream('user-faults.ann')).map((e) => e.type)).toEqual(['UserCreated', 'UserUpdated']);
    } finally {
      await log.close();
    }
  };

  it('with users_v1 parked, the embedded server answers writes that do not read it at once, and those that do with a prompt truthful 503', async () => {
    const dir = lab.dataDir();
    const server = await lab.start('dist/src/main.js', processEnv(dir, { READ_YOUR_WRITES_TIMEOUT_MS: '20000' }));
    expect((await chat(server.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    await appendPoison(dir);
    expect(await parkedIn(server.port, 'users_v1')).toBe(true);
    await writesBesideParkedUsers(server.port);
    await savedInLog(dir);
    const report = (await health(server.port)).body;
    expect(report.projections.rooms_v1).toMatchObject({ state: 'running', lag_events: 0 });
    expect(report.projections.users_v1.state).toBe('parked');
  }, 90_000);

  it('with users_v1 parked by a projector worker, an API process beside it answers the same', async () => {
    const env = processEnv(lab.dataDir(), { READ_YOUR_WRITES_TIMEOUT_MS: '20000' });
    await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', env);
    expect((await chat(api.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    await appendPoison(env.DATA_DIR);
    expect(await parkedIn(api.port, 'users_v1')).toBe(true);
    await writesBesideParkedUsers(api.port);
    await savedInLog(env.DATA_DIR);
  }, 90_000);

  itAsRoot('answers writes on a full disk with a JSON 503 that says nothing was saved, reports it in /health, and recovers by itself once space is freed', async () => {
    const dir = join(lab.dataDir(), 'small-volume');
    mkdirSync(dir);
    mountTmpfs(dir, '24m');
    try {
      const server = await lab.start('dist/src/main.js', processEnv(dir));
      expect((await chat(server.port, 'POST', '/users', { id: 'carol', name: 'C' })).status).toBe(201);
      expect((await chat(server.port, 'POST', '/rooms', { id: 'full', name: 'full', user_ids: ['carol'] })).status).toBe(201);
      const acknowledged: string[] = [];
      const send = async (text: string) => {
        const answer = await chat(server.port, 'POST', '/rooms/full/messages', { text }, { sub: 'carol', version: 'v2' });
        if (answer.status === 201) acknowledged.push(text);
        return answer;
      };
      expect((await send('before')).status).toBe(201);

      const filler = join(dir, 'filler.bin');
      fillVolume(filler);
      // Free pages inside the SQLite files (and a WAL kept at its size) may still take a few
      // appends after the file system is full: the first refused one is what a client sees.
      let refused = await send('x'.repeat(4000));
      for (let n = 1; refused.status === 201 && n < 50; n++) refused = await send(`${n} ${'x'.repeat(4000)}`);
      expect(refused.status).toBe(503);
      expect(refused.body.error).toMatch(/^services\/chatkit\/unavailable\//);
      expect(refused.body.error_description).toMatch(/not saved/i);
      const sick = await health(server.port);
      expect(sick.status).toBe(503);
      expect(sick.body.storage.state).toBe('failing');
      expect((await fetch(`http://127.0.0.1:${server.port}/health/live`)).status).toBe(200);

      rmSync(filler);
      expect(await eventually(async () => (await health(server.port)).status === 200, 15_000)).toBe(true);
      expect((await send('after')).status).toBe(201);
      const page = await chat(server.port, 'GET', '/rooms/full/messages?limit=100', undefined, { sub: 'carol', version: 'v2' });
      expect(page.body.map((m: { text: string }) => m.text).sort()).toEqual([...acknowledged].sort());
    } finally {
      await lab.stopAll();
      execFileSync('umount', ['-l', dir]);
    }
  }, 60_000);
});

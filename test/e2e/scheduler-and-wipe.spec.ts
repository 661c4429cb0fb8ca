/**
 * Asynchronous deletes (chatkit_scheduler v1) and the instance wipe (`DELETE /resources`),
 * over HTTP and through the unmodified `@pusher/chatkit-server`.
 */
import Chatkit from '@pusher/chatkit-server';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { chat, eventually, FaultLab, INSTANCE, processEnv, tokenFor } from '../faults/process-client';
import { startTestServer, TestServer } from '../support/test-server';
import { openHttpSubscription } from '../support/subscribe-client';
import { eventually as accepted, sleep } from '../support/waiting';

/** The first answer `read` gives that `done` accepts. */
const until = <T extends object>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000) =>
  accepted(async () => {
    const value = await read();
    return done(value) && value;
  }, { timeoutMs, everyMs: 50 });

describe('asynchronous deletes and the instance wipe', () => {
  let s: TestServer;
  let chatkit: Chatkit;
  const scheduler = (path: string) => `/services/chatkit_scheduler/v1/${s.instanceId}${path}`;

  beforeAll(async () => {
    s = await startTestServer({ https: true });
    chatkit = new Chatkit({ instanceLocator: s.locator, key: `${s.keyId}:${s.secret}`, host: 'localhost', port: s.httpsPort });
  });
  afterAll(async () => {
    await s?.close();
  });

  describe('chatkit_scheduler over HTTP', () => {
    it('deletes a room: {id}, then pending → completed, and the room is gone from reads', async () => {
      await s.request('POST', s.chat('/users'), { body: { id: 'hana', name: 'Hana' } });
      const room = (await s.request('POST', s.chat('/rooms'), { body: { name: 'doomed', user_ids: ['hana'] }, token: s.token({ su: true, sub: 'hana' }) })).body;
      const put = await s.request('PUT', scheduler(`/rooms/${room.id}`));
      expect(put.status).toBe(200);
      expect(put.body).toEqual({ id: expect.any(String) });
      const status = await until(
        () => s.request('GET', scheduler(`/status/${put.body.id}`)),
        (r) => r.body?.status !== 'pending',
      );
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ status: 'completed' });
      expect((await s.request('GET', s.chat(`/rooms/${room.id}`))).status).toBe(404);
    });

    it('deletes a user, and refuses what cannot be a job', async () => {
      await s.request('POST', s.chat('/users'), { body: { id: 'ivo', name: 'Ivo' } });
      const put = await s.request('PUT', scheduler('/users/ivo'));
      const status = await until(() => s.request('GET', scheduler(`/status/${put.body.id}`)), (r) => r.body?.status !== 'pending');
      expect(status.body).toMatchObject({ status: 'completed' });
      expect((await s.request('GET', s.chat('/users/ivo'))).status).toBe(404);

      const unknownUser = await s.request('PUT', scheduler('/users/nobody'));
      expect(unknownUser.status).toBe(404);
      expect(unknownUser.body.error).toMatch(/user_not_found/);
      expect((await s.request('PUT', scheduler('/rooms/nowhere'))).status).toBe(404);
      const unknownJob = await s.request('GET', scheduler('/status/no-such-job'));
      expect(unknownJob.status).toBe(404);
      expect(unknownJob.body).toEqual({ error: expect.stringMatching(/job_not_found/), error_description: expect.any(String) });
      const notSu = await s.request('PUT', scheduler('/users/hana'), { token: s.token({ sub: 'hana' }) });
      expect(notSu.status).toBe(403);
      expect((await s.request('GET', s.chat('/users/hana'))).status).toBe(200);
      expect((await s.request('GET', scheduler(`/status/${put.body.id}`), { token: null })).status).toBe(401);
    });
  });

  describe('DELETE /resources (the instance wipe)', () => {
    const files = (path: string) => `/services/chatkit_files/v1/${s.instanceId}${path}`;
    const cursors = (path: string) => `/services/chatkit_cursors/v2/${s.instanceId}/cursors/0${path}`;
    const authorizer = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;

    it('wipes users, rooms, messages, cursors, files and every role; the same keys and ids work at once', async () => {
      // A new instance has the built-in roles.
      expect((await chatkit.getRoles()).map((r: any) => r.name).sort()).toEqual(['admin', 'default']);
      await chatkit.createUsers({ users: [{ id: 'kim', name: 'Kim' }, { id: 'lou', name: 'Lou' }] });
      await chatkit.createRoom({ id: 'lobby', creatorId: 'kim', name: 'lobby', userIds: ['lou'] });
      const oldMessage = await chatkit.sendSimpleMessage({ userId: 'kim', roomId: 'lobby', text: 'before the wipe' });
      await chatkit.setReadCursor({ userId: 'lou', roomId: 'lobby', position: oldMessage.message_id });
      await chatkit.createGlobalRole({ name: 'janitor', permissions: ['room:delete'] });
      await chatkit.assignGlobalRoleToUser({ userId: 'lou', name: 'admin' });
      const boundary = 'b0undary';
      const upload = await fetch(s.baseUrl + files('/rooms/lobby/users/kim/files/old.txt'), {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token({ sub: 'kim' })}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="old.txt"\r\nContent-Type: text/plain\r\n\r\nold bytes\r\n--${boundary}--\r\n`,
      });
      expect(upload.status).toBe(200);
      const file = await s.request('GET', files('/rooms/lobby/files/old.txt'), { token: s.token({ sub: 'kim' }) });
      expect(file.status).toBe(200);
      const download = file.body.resource_link as string;
      expect((await fetch(download)).status).toBe(200);

      // Only su may wipe.
      expect((await s.request('DELETE', s.chat('/resources'), { token: s.token({ sub: 'lou' }) })).status).toBe(403);
      expect((await s.request('GET', s.chat('/users/kim'))).status).toBe(200);

      // Streams open at the wipe end with a 503 the SDKs resubscribe on.
      const userStream = await openHttpSubscription(s.baseUrl + s.chat('/users'), { authorization: `Bearer ${s.token({ sub: 'kim' })}` });
      expect((await userStream.nextEvent()).body.event_name).toBe('initial_state');
      const roomStream = await openHttpSubscription(s.baseUrl + s.chat('/rooms/lobby'), { authorization: `Bearer ${s.token({ sub: 'kim' })}` });
      expect((await roomStream.nextEvent()).body.data.parts[0].content).toBe('before the wipe');

      const wiped = await chatkit.apiRequest({ method: 'DELETE', path: '/resources' });
      expect((wiped as any).statusCode ?? (wiped as any).status).toBe(204);
      for (const stream of [userStream, roomStream]) {
        await expect(stream.nextEvent()).rejects.toThrow(/End of stream 503: .*instance_wiped/);
        await stream.close();
      }

      // No read shows wiped data.
      expect(await chatkit.getUsers()).toEqual([]);
      expect(await chatkit.getRooms({ includePrivate: true })).toEqual([]);
      await expect(chatkit.getUser({ id: 'kim' })).rejects.toMatchObject({ status: 404 });
      await expect(chatkit.getRoom({ roomId: 'lobby' })).rejects.toMatchObject({ status: 404 });
      expect((await s.request('GET', cursors('/users/lou'))).body).toEqual([]);
      expect((await s.request('GET', files('/rooms/lobby/files/old.txt'))).status).toBe(404);
      expect((await fetch(download)).status).toBe(404);
      // No role is left, the built-in ones included (as Chatkit's wipe left none).
      expect(await chatkit.getRoles()).toEqual([]);

      // The same ids are free again, and the instance works with the same key.
      await chatkit.createUsers({ users: [{ id: 'kim', name: 'Kim again' }, { id: 'lou', name: 'Lou again' }] });
      expect(await chatkit.getUser({ id: 'kim' })).toMatchObject({ id: 'kim', name: 'Kim again' });
      await chatkit.createRoom({ id: 'lobby', creatorId: 'kim', name: 'lobby-again' });
      expect(await chatkit.getRoomMessages({ roomId: 'lobby', direction: 'older' })).toEqual([]);
      const newMessage = await chatkit.sendSimpleMessage({ userId: 'kim', roomId: 'lobby', text: 'after the wipe' });
      expect(newMessage.message_id).toBeGreaterThan(oldMessage.message_id); // message ids never repeat
      expect((await chatkit.getRoomMessages({ roomId: 'lobby', direction: 'older' })).map((m: any) => m.parts?.[0]?.content ?? m.text)).toEqual([
        'after the wipe',
      ]);
      expect((await s.request('GET', cursors('/users/lou'))).body).toEqual([]);
      // Old role assignments lapsed, and with no role a user's token is allowed nothing a role grants.
      expect(await chatkit.getUserRoles({ userId: 'lou' })).toEqual([]);
      const asLou = { token: s.token({ sub: 'lou' }) };
      const refused = await s.request('GET', s.chat('/rooms/lobby'), asLou);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe('services/chatkit/forbidden/missing_permission');
      await expect(chatkit.assignGlobalRoleToUser({ userId: 'lou', name: 'admin' })).rejects.toMatchObject({ status: 404 });
      // What the SDKs' own test suites do right after the wipe: create default and admin again.
      await chatkit.createGlobalRole({ name: 'default', permissions: ['room:get', 'room:messages:get'] });
      await chatkit.createGlobalRole({ name: 'admin', permissions: ['room:get', 'room:delete'] });
      expect((await chatkit.getRoles()).map((r: any) => r.name).sort()).toEqual(['admin', 'default']);
      expect((await chatkit.getUserRoles({ userId: 'lou' })).map((r: any) => r.role_name)).toEqual(['default']);
      expect((await s.request('GET', s.chat('/rooms/lobby'), asLou)).status).toBe(200);
      expect((await s.request('DELETE', s.chat('/rooms/lobby'), asLou)).status).toBe(403);
      await chatkit.createGlobalRole({ name: 'janitor', permissions: ['room:get'] });
      expect(await chatkit.getPermissionsForGlobalRole({ name: 'janitor' })).toEqual(['room:get']);
      await chatkit.assignGlobalRoleToUser({ userId: 'lou', name: 'admin' });
      expect((await s.request('DELETE', s.chat('/rooms/lobby'), asLou)).status).toBe(204);
    });
  });

  it('chatkit-server: asyncDeleteRoom, asyncDeleteUser, getDeleteStatus', async () => {
    await chatkit.createUser({ id: 'jo', name: 'Jo' });
    const room = await chatkit.createRoom({ creatorId: 'jo', name: 'async' });
    const roomJob = await chatkit.asyncDeleteRoom({ roomId: room.id });
    const userJob = await chatkit.asyncDeleteUser({ userId: 'jo' });
    expect(roomJob).toEqual({ id: expect.any(String) });
    for (const job of [roomJob, userJob]) {
      const status = await until(() => chatkit.getDeleteStatus({ jobId: job.id }), (r: any) => r.status === 'completed');
      expect(status).toMatchObject({ status: 'completed' });
    }
    await expect(chatkit.getRoom({ roomId: room.id })).rejects.toMatchObject({ status: 404 });
    await expect(chatkit.getUser({ id: 'jo' })).rejects.toMatchObject({ status: 404 });
  });

  describe('a job outlives its process (dist/src/main.js, kill -9)', () => {
    const lab = new FaultLab();
    afterAll(() => lab.cleanUp());

    it('is pending while the read models cannot be written, and completes after a restart', async () => {
      const dir = lab.dataDir();
      // A short read-your-writes bound: the delete then gives up waiting quickly and the job stays pending.
      const env = processEnv(dir, { READ_YOUR_WRITES_TIMEOUT_MS: '1000' });
      let server = await lab.start('dist/src/main.js', env);
      expect((await chat(server.port, 'POST', '/users', { id: 'max', name: 'Max' })).status).toBe(201);
      expect((await chat(server.port, 'POST', '/rooms', { id: 'attic', name: 'attic', user_ids: ['max'] })).status).toBe(201);
      const scheduler = (port: number, path: string, method = 'GET') =>
        fetch(`http://127.0.0.1:${port}/services/chatkit_scheduler/v1/${INSTANCE}${path}`, {
          method,
          headers: { authorization: `Bearer ${tokenFor({ su: true })}` },
        }).then(async (r) => ({ status: r.status, body: await r.json() }));

      // Hold the read models' write lock as another process would: no projection can fold the delete.
      const other = new Database(join(dir, 'read-models.sqlite'));
      other.prepare('BEGIN IMMEDIATE').run();
      let job: string;
      try {
        const put = await scheduler(server.port, '/rooms/attic', 'PUT');
        expect(put.status).toBe(200);
        job = put.body.id;
        // The delete is appended but not reflected: the job is pending for longer than the read-your-writes bound.
        await sleep(1_500);
        expect((await scheduler(server.port, `/status/${job}`)).body).toMatchObject({ status: 'pending' });
        await server.stop('SIGKILL');
      } finally {
        other.prepare('ROLLBACK').run();
        other.close();
      }

      server = await lab.start('dist/src/main.js', env);
      const status = await until(() => scheduler(server.port, `/status/${job}`), (r) => r.body?.status !== 'pending', 15_000);
      expect(status.body).toMatchObject({ status: 'completed' });
      expect((await chat(server.port, 'GET', '/rooms/attic')).status).toBe(404);
      expect((await chat(server.port, 'GET', '/users/max')).status).toBe(200);
    }, 60_000);
  });

  describe('a wipe reaches the permission checks of every API process (dist/src/main.api.js ×2)', () => {
    const lab = new FaultLab();
    afterAll(() => lab.cleanUp());

    it('the other process refuses a user once the wipe left no role, and grants again once default is created', async () => {
      const env = processEnv(lab.dataDir());
      await lab.startWorker(env);
      const [one, two] = [await lab.start('dist/src/main.api.js', env), await lab.start('dist/src/main.api.js', env)];
      expect((await chat(one.port, 'POST', '/users', { id: 'pat', name: 'Pat' })).status).toBe(201);
      // The second process compiles Pat's permissions (the built-in default role) and keeps them.
      expect(await eventually(async () => (await chat(two.port, 'GET', '/users/pat', undefined, { sub: 'pat' })).status === 200, 10_000)).toBe(true);

      expect((await chat(one.port, 'DELETE', '/resources')).status).toBe(204);
      expect((await chat(one.port, 'POST', '/users', { id: 'pat', name: 'Pat again' })).status).toBe(201);
      const refused = async () => {
        const answer = await chat(two.port, 'GET', '/users/pat', undefined, { sub: 'pat' });
        return answer.status === 403 && answer.body.error === 'services/chatkit/forbidden/missing_permission';
      };
      expect(await eventually(refused, 10_000)).toBe(true);

      const roles = await fetch(`http://127.0.0.1:${one.port}/services/chatkit_authorizer/v2/${INSTANCE}/roles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenFor({ su: true })}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'default', scope: 'global', permissions: ['user:get'] }),
      });
      expect(roles.status).toBe(201);
      expect(await eventually(async () => (await chat(two.port, 'GET', '/users/pat', undefined, { sub: 'pat' })).status === 200, 10_000)).toBe(true);
    }, 60_000);
  });
});

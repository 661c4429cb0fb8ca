/**
 * Asynchronous deletes (chatkit_scheduler v1) and the instance wipe (`DELETE /resources`),
 * over HTTP and through the unmodified `@pusher/chatkit-server`.
 */
import Chatkit from '@pusher/chatkit-server';
import { startTestServer, TestServer } from '../support/test-server';

const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
};

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
});

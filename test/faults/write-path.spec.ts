import Database from 'better-sqlite3';
import { join } from 'node:path';
import { openSealedLog } from '../support/sealed-log';
import { messageIdsStream, messagesStream } from '../../src/modules/messages/domain/message.decider';
import { Answer, chat, eventually, FaultLab, INSTANCE, processEnv } from './process-client';

/**
 * A send fails at each step of the write path, by real means on the real files of real
 * processes (an API process and a projector worker), and each answer is checked against the log:
 * - before the message's append (the id block reservation cannot write),
 * - at the append (the event log's write lock is held by another process),
 * - after the append, before the projection (the worker is stopped with SIGSTOP), as the
 *   first send after a restart, which reserves ids first (once answered "saved" for a message
 *   never written, when the reservation waited for the read models).
 * Only the last may say "saved", and then the message is in the log.
 */
describe('the write path answers truthfully at each step (real process, real files)', () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('says "not saved" for failures up to the append and "saved" only for a message in the log', async () => {
    const dir = lab.dataDir();
    const env = processEnv(dir, { READ_YOUR_WRITES_TIMEOUT_MS: '1000' });
    const worker = await lab.startWorker(env);
    let server = await lab.start('dist/src/main.api.js', env);
    expect((await chat(server.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/rooms', { id: 'steps', name: 'steps', user_ids: ['ann'] })).status).toBe(201);

    const log = openSealedLog(dir); // message texts are sealed in the log: read as the server reads them
    const texts = async () =>
      (await log.readStream(messagesStream(INSTANCE, 'steps'))).map((e) => (e.data as { parts: { content: string }[] }).parts[0].content);
    const send = (text: string) => chat(server.port, 'POST', '/rooms/steps/messages', { text }, { sub: 'ann', version: 'v2' });
    /** Holds the event log's write lock as another process would, while `during` runs. */
    const holdingWriteLock = async (during: () => Promise<Answer>): Promise<Answer> => {
      const other = new Database(join(dir, 'events.sqlite'));
      other.exec('BEGIN IMMEDIATE');
      try {
        return await during();
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
    };
    const expectNotSaved = (answer: Answer) => {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toBe('services/chatkit/unavailable/storage_unavailable');
      expect(answer.body.error_description).toBe(
        'The change was not saved: the event log is locked by another process; it is safe to retry',
      );
    };
    const expectSaved = (answer: Answer) => {
      expect(answer.status).toBe(503);
      expect(answer.body.error).toBe('services/chatkit/unavailable/projection_lag');
      expect(answer.body.error_description).toMatch(/^The change was saved/);
    };

    try {
      // 1. Before the append: this process has no ids yet, and reserving a block cannot write.
      expectNotSaved(await holdingWriteLock(() => send('before the append')));
      expect(await log.readStream(messageIdsStream(INSTANCE))).toEqual([]);
      expect(await texts()).toEqual([]);

      // 2. At the append: ids are reserved, the message's own append cannot write.
      expect((await send('first')).status).toBe(201);
      expectNotSaved(await holdingWriteLock(() => send('at the append')));
      expect(await texts()).toEqual(['first']);

      // 3. After the append, before the projection, as the first send after a restart (ids
      // must be reserved first): the answer says saved, and it is.
      await server.stop('SIGKILL');
      server = await lab.start('dist/src/main.api.js', env);
      worker.child.kill('SIGSTOP');
      try {
        expectSaved(await send('after the append'));
      } finally {
        worker.child.kill('SIGCONT');
      }
      expect(await texts()).toEqual(['first', 'after the append']);

      // Whatever was saved becomes readable once the worker folds again; nothing else appears.
      const readable = async () => {
        const page = await chat(server.port, 'GET', '/rooms/steps/messages?limit=10', undefined, { sub: 'ann', version: 'v2' });
        return page.status === 200 ? (page.body as { text: string }[]).map((m) => m.text).sort() : [];
      };
      const expected = ['after the append', 'first'];
      expect(await eventually(async () => JSON.stringify(await readable()) === JSON.stringify(expected), 15_000)).toBe(true);
      expect((await send('healthy again')).status).toBe(201);
    } finally {
      await log.close();
      await lab.stopAll();
    }
  }, 60_000);
});

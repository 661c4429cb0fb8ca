import { join } from 'node:path';
import { ChatServer } from '../../src/client';
import { freePort } from '../support/free-port';
import { rowsOf } from '../support/plaintext-log';
import { eventually as until } from '../support/waiting';
import { eventually, FaultLab, health, INSTANCE, processEnv } from './process-client';

/**
 * `parley/chat-server` across a crash: the API process is killed (-9) after a send's message is
 * in the log and before it answered. The library, unaware, retries with the send's
 * `Idempotency-Key`: connections refused while nothing listens, then the server started again on
 * the same data and port. The call resolves with the id of the one message the first attempt
 * wrote, and the room holds it once.
 */
describe('client library retries across a kill -9 between the append and the answer (real processes)', () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('the send resolves with the id of the one message in the log', async () => {
    const dir = lab.dataDir();
    const port = await freePort();
    // Writes wait for their read models far longer than the test takes: with no worker, a send hangs after its append.
    const env = processEnv(dir, { PROJECTION_LEASE_TTL_MS: '1000', READ_YOUR_WRITES_TIMEOUT_MS: '120000' });
    const worker = await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', { ...env, PORT: String(port) });
    expect(await eventually(async () => (await health(api.port)).status === 200, 15_000)).toBe(true);

    const options = { instanceLocator: `v1:local:${INSTANCE}`, key: env.INSTANCE_KEY, host: '127.0.0.1', port, tls: false };
    const setup = new ChatServer(options);
    await setup.createUser({ id: 'ann', name: 'Ann' });
    const room = await setup.createRoom({ creatorId: 'ann', name: 'lobby' });

    await worker.stop('SIGKILL');
    const retried: unknown[] = [];
    const chat = new ChatServer({
      ...options,
      retry: { retries: 10_000, minDelayMs: 20, maxDelayMs: 200, timeoutMs: 120_000, onRetry: ({ error }) => retried.push(error) },
    });
    const sending = chat.sendSimpleMessage({ roomId: room.id, userId: 'ann', text: 'sent once' });
    const sent = () => rowsOf(join(dir, 'events.sqlite')).filter((row) => row.type === 'MessageSent');
    await until(() => sent().length === 1, { timeoutMs: 30_000, what: 'the message in the log' });
    expect(retried).toEqual([]); // the first attempt is still waiting for its answer
    await api.stop('SIGKILL');
    await until(() => retried.length > 0, { what: 'a retry after the kill' });

    await lab.start('dist/src/main.js', { ...env, PORT: String(port) });
    const answer = await sending;
    const rows = sent();
    expect(rows).toHaveLength(1);
    expect(answer).toEqual({ message_id: (JSON.parse(rows[0].data) as { id: number }).id });
    const messages = await setup.fetchMultipartMessages({ roomId: room.id });
    expect(messages.map((m) => m.id)).toEqual([answer.message_id]);
  }, 120_000);
});

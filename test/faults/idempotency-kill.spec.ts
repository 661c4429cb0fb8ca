import { join } from 'node:path';
import { rowsOf } from '../support/plaintext-log';
import { chat, eventually, FaultLab, health, INSTANCE, processEnv, tokenFor } from './process-client';

/**
 * Idempotent sends where more than one process is involved. A send whose answer was lost: the API process is killed (-9) after the message is in
 * the log and before it answered. The retry with the same key, to the server started again on the
 * same data, is answered with the message's id, and the room holds the message once.
 */
describe('Idempotency-Key across a kill -9 between the append and the answer (real processes)', () => {
  const lab = new FaultLab();
  afterEach(() => lab.stopAll());
  afterAll(() => lab.cleanUp());

  const send = async (port: number, key: string, text = 'sent once'): Promise<{ status: number; body: any; replayed: string | null; retryAfter: string | null }> => {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/services/chatkit/v6/${INSTANCE}/rooms/lobby/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenFor({ sub: 'ann' })}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ parts: [{ type: 'text/plain', content: text }] }),
      });
      const body = await response.text();
      return {
        status: response.status,
        body: body ? JSON.parse(body) : undefined,
        replayed: response.headers.get('idempotent-replayed'),
        retryAfter: response.headers.get('retry-after'),
      };
    } catch {
      return { status: 0, body: null, replayed: null, retryAfter: null };
    }
  };

  it('answers the retry after the restart with the id of the one message the first attempt wrote (and a create whose answer is lost with 409 answer_lost)', async () => {
    const dir = lab.dataDir();
    // Writes wait for their read models far longer than the test takes: the send hangs after its append.
    const env = processEnv(dir, { PROJECTION_LEASE_TTL_MS: '1000', READ_YOUR_WRITES_TIMEOUT_MS: '120000' });
    const worker = await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', env);
    expect(await eventually(async () => (await health(api.port)).status === 200, 15_000)).toBe(true);
    expect((await chat(api.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(api.port, 'POST', '/rooms', { id: 'lobby', name: 'Lobby' }, { sub: 'ann' })).status).toBe(201);

    // A keyed request looks its key up once idempotency_keys reached the log's head: this one (to
    // no room, so it changes nothing) returns once the worker folded everything written so far.
    const barrier = await fetch(`http://127.0.0.1:${api.port}/services/chatkit/v6/${INSTANCE}/rooms/nowhere/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokenFor({ sub: 'ann' })}`, 'content-type': 'application/json', 'idempotency-key': 'barrier' },
      body: JSON.stringify({ parts: [{ type: 'text/plain', content: 'x' }] }),
    });
    expect(barrier.status).toBe(404);
    // No worker: what the API appends from now on is in the log, and no read model shows it.
    await worker.stop('SIGKILL');
    const key = 'retry-after-crash-1';
    const lost = send(api.port, key);
    // A change whose answer the log does not hold (a created user's), killed the same way.
    const createUser = (port: number) =>
      fetch(`http://127.0.0.1:${port}/services/chatkit/v6/${INSTANCE}/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenFor({ su: true })}`, 'content-type': 'application/json', 'idempotency-key': 'create-bob' },
        body: JSON.stringify({ id: 'bob', name: 'Bob' }),
      }).then(
        async (response) => ({ status: response.status, body: (await response.json()) as { error: string } }),
        () => ({ status: 0, body: null }),
      );
    const lostCreate = createUser(api.port);
    const guardedOf = (type: string) => () =>
      rowsOf(join(dir, 'events.sqlite')).filter((row) => row.type === type && JSON.parse(row.metadata).idempotency !== undefined);
    const guarded = guardedOf('MessageSent');
    expect(await eventually(async () => guarded().length === 1 && guardedOf('UserCreated')().length === 1, 30_000)).toBe(true);
    await api.stop('SIGKILL');
    expect((await lost).status).toBe(0); // the client never heard back
    expect((await lostCreate).status).toBe(0);

    const server = await lab.start('dist/src/main.js', env);
    const retry = await send(server.port, key);
    const [row] = guarded();
    const loggedId = (JSON.parse(row.data) as { id: number }).id;
    expect(retry).toEqual({ status: 201, body: { message_id: loggedId }, replayed: 'true', retryAfter: null });
    expect(guarded()).toHaveLength(1);
    const messages = await chat(server.port, 'GET', '/rooms/lobby/messages', undefined, { sub: 'ann' });
    expect(messages.body.map((m: { id: number }) => m.id)).toEqual([loggedId]);
    // And again, now from a live server's stored state.
    expect(await send(server.port, key)).toEqual(retry);

    // The user is created once; its answer is not in the log: the retry is told the change was made.
    const createRetry = await createUser(server.port);
    expect({ status: createRetry.status, error: createRetry.body?.error }).toEqual({ status: 409, error: 'services/chatkit/conflict/idempotency_key_answer_lost' });
    expect(guardedOf('UserCreated')()).toHaveLength(1);
    expect((await chat(server.port, 'GET', '/users/bob')).body).toMatchObject({ id: 'bob', name: 'Bob' });
  }, 120_000);

  it('makes one change for duplicates sent at once to two API processes on the same data', async () => {
    const env = processEnv(lab.dataDir(), { READ_YOUR_WRITES_TIMEOUT_MS: '60000' });
    await lab.startWorker(env);
    const apis = [await lab.start('dist/src/main.api.js', env), await lab.start('dist/src/main.api.js', env)];
    for (const api of apis) expect(await eventually(async () => (await health(api.port)).status === 200, 15_000)).toBe(true);
    expect((await chat(apis[0].port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(apis[0].port, 'POST', '/rooms', { id: 'lobby', name: 'Lobby' }, { sub: 'ann' })).status).toBe(201);

    for (let round = 0; round < 3; round++) {
      const key = `across-processes-${round}`;
      const text = `round ${round}`;
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(apis[i % 2].port, key, text)));
      const messages = (await chat(apis[1].port, 'GET', '/rooms/lobby/messages?limit=100', undefined, { sub: 'ann' })).body as { id: number; parts: { content: string }[] }[];
      const sent = messages.filter((m) => m.parts[0].content === text);
      expect(sent).toHaveLength(1);
      for (const answer of answers) {
        if (answer.status === 409) expect({ error: answer.body.error, retryAfter: answer.retryAfter }).toEqual({ error: 'services/chatkit/conflict/idempotency_key_in_flight', retryAfter: '1' });
        else expect({ status: answer.status, body: answer.body }).toEqual({ status: 201, body: { message_id: sent[0].id } });
      }
      // The answer, from either process, once the first is done.
      for (const api of apis) expect((await send(api.port, key, text)).body).toEqual({ message_id: sent[0].id });
    }
  }, 120_000);

  it('refuses a keyed write it cannot check yet (its key records behind the log) with 503, and writes nothing', async () => {
    const dir = lab.dataDir();
    const env = processEnv(dir, { READ_YOUR_WRITES_TIMEOUT_MS: '1500' });
    const worker = await lab.startWorker(env);
    const api = await lab.start('dist/src/main.api.js', env);
    expect(await eventually(async () => (await health(api.port)).status === 200, 15_000)).toBe(true);
    expect((await chat(api.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(api.port, 'POST', '/rooms', { id: 'lobby', name: 'Lobby' }, { sub: 'ann' })).status).toBe(201);
    await worker.stop('SIGKILL');
    // Saved, not shown: the log's head is now past every read model, idempotency_keys included.
    const unkeyed = await chat(api.port, 'POST', '/rooms/lobby/messages', { parts: [{ type: 'text/plain', content: 'no key' }] }, { sub: 'ann' });
    expect({ status: unkeyed.status, error: unkeyed.body.error }).toEqual({ status: 503, error: 'services/chatkit/unavailable/projection_lag' });

    const keyed = await send(api.port, 'checked-later', 'with a key');
    expect({ status: keyed.status, error: keyed.body.error }).toEqual({ status: 503, error: 'services/chatkit/unavailable/idempotency_keys_behind' });
    expect(keyed.body.error_description).toMatch(/nothing was done/);
    expect(rowsOf(join(dir, 'events.sqlite')).filter((row) => row.type === 'MessageSent').map((row) => JSON.parse(row.metadata).idempotency)).toEqual([undefined]);
  }, 120_000);
});

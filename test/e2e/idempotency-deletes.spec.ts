import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { Answer, ChatServerOnDataDir } from '../support/chat-server-on-data-dir';
import { readableIdempotentAnswers } from '../support/readable-idempotent-answers';
import { eventually } from '../support/waiting';

/**
 * Deleting means gone, for the answers of idempotent writes too (docs/idempotency.md): a stored
 * answer is sealed under the data keys of the content its change sealed, so the delete that
 * destroys those keys makes it unreadable at once. A real server from dist/ on the embedded
 * default: a user and a room created with an `Idempotency-Key` (their names and custom data
 * carry markers) are answered again on a retry; once deleted, a retry is answered 409
 * `idempotency_key_answer_lost` (the change is not made again), and nothing the data directory
 * holds or can open with its own master key and data keys (the stored answers opened included)
 * shows a marker. What was not deleted is still answered, and so are answers that show nothing
 * (a send's id, a 204). The same for a user erased on request.
 */
const INSTANCE = 'idempotent-deletes';
const KEY = 'idempotent-deletes-key:idempotent-deletes-secret-41b7';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
const v6 = (path: string) => `/services/chatkit/v6/${INSTANCE}${path}`;

let server: ChatServerOnDataDir;
let dataDir: string;

const keyed = (key: string) => ({ 'idempotency-key': key });
const answerOf = (a: Answer) => ({ status: a.status, body: a.body, replayed: a.headers.get('idempotent-replayed') });

/** A 409 that says the change was made and what it answered has been deleted since, showing none of it. */
const expectAnswerDeleted = (retry: Answer) => {
  expect({ status: retry.status, body: retry.body }).toEqual({
    status: 409,
    body: {
      error: 'services/chatkit/conflict/idempotency_key_answer_lost',
      error_description: expect.stringMatching(/was made, but what it answered has since been deleted.*do not send it again/),
    },
  });
};

describe('the stored answer of an idempotent write goes with the content it shows', () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-idempotent-deletes-'));
    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
    for (const id of ['owner', 'joiner']) await server.call('POST', v6('/users'), { body: { id, name: id } });
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a retry of a deleted user\'s or room\'s creation, or of a join of a deleted room, 409 answer_lost, makes neither again, and leaves no marker of them readable', async () => {
    const [userName, userCustom, roomName, roomCustom, keptName, joinedName] = ['user-name', 'user-custom', 'room-name', 'room-custom', 'kept-name', 'joined-name'].map(marker);
    const createUser = { id: 'gone-user', name: userName, custom_data: { note: userCustom } };
    const createRoom = { id: 'gone-room', name: roomName, custom_data: { note: roomCustom } };
    const createKept = { id: 'kept-user', name: keptName };
    const owner = server.token({ sub: 'owner' });
    const [userKey, roomKey, keptKey, sendKey, joinKey] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const userCall = () => server.call('POST', v6('/users'), { body: createUser, headers: keyed(userKey), anyStatus: true });
    const roomCall = () => server.call('POST', v6('/rooms'), { body: createRoom, headers: keyed(roomKey), as: owner, anyStatus: true });
    const keptCall = () => server.call('POST', v6('/users'), { body: createKept, headers: keyed(keptKey), anyStatus: true });

    const user = await userCall();
    const room = await roomCall();
    const kept = await keptCall();
    expect([user.status, room.status, kept.status]).toEqual([201, 201, 201]);
    expect(user.body).toMatchObject({ name: userName, custom_data: { note: userCustom } });
    expect(room.body).toMatchObject({ name: roomName, custom_data: { note: roomCustom } });
    // Before the deletes, a retry is answered as the first time.
    expect(answerOf(await userCall())).toEqual({ status: 201, body: user.body, replayed: 'true' });
    expect(answerOf(await roomCall())).toEqual({ status: 201, body: room.body, replayed: 'true' });
    // A send, whose answer (its id) the change itself tells.
    await server.call('POST', v6('/rooms'), { body: { id: 'kept-room', name: 'Kept' }, as: owner });
    const message = { parts: [{ type: 'text/plain', content: marker('text') }] };
    const sendCall = () => server.call('POST', v6('/rooms/kept-room/messages'), { body: message, headers: keyed(sendKey), as: owner, anyStatus: true });
    const sent = await sendCall();
    expect(sent.status).toBe(201);
    // An update, answered 204: its answer shows nothing, though its change sealed the new name.
    const updateKey = randomUUID();
    const updated = { name: marker('updated-name') };
    const updateCall = () => server.call('PUT', v6('/users/gone-user'), { body: updated, headers: keyed(updateKey), anyStatus: true });
    expect((await updateCall()).status).toBe(204);
    // A join, whose answer shows the room it joined (its name), which the join's own events do not hold.
    await server.call('POST', v6('/rooms'), { body: { id: 'joined-room', name: joinedName }, as: owner });
    const joinCall = () => server.call('POST', v6('/users/joiner/rooms/joined-room/join'), { headers: keyed(joinKey), as: server.token({ sub: 'joiner' }), anyStatus: true });
    const joined = await joinCall();
    expect({ status: joined.status, name: joined.body.name }).toEqual({ status: 200, name: joinedName });
    expect(answerOf(await joinCall())).toEqual({ status: 200, body: joined.body, replayed: 'true' });

    await server.call('DELETE', v6('/users/gone-user'));
    await server.call('DELETE', v6('/rooms/gone-room'));
    await server.call('DELETE', v6('/rooms/joined-room'));
    await server.call('DELETE', v6(`/rooms/kept-room/messages/${sent.body.message_id}`), { as: owner });

    const userRetry = await userCall();
    const roomRetry = await roomCall();
    expectAnswerDeleted(userRetry);
    expectAnswerDeleted(roomRetry);
    const joinRetry = await joinCall();
    expectAnswerDeleted(joinRetry);
    // Neither was made again.
    expect((await server.call('GET', v6('/users/gone-user'), { anyStatus: true })).status).toBe(404);
    expect((await server.call('GET', v6('/rooms/gone-room'), { anyStatus: true })).status).toBe(404);
    // What was not deleted is answered again; a deleted message's send is answered with its id, which shows nothing of it.
    expect(answerOf(await keptCall())).toEqual({ status: 201, body: kept.body, replayed: 'true' });
    expect(answerOf(await sendCall())).toEqual({ status: 201, body: sent.body, replayed: 'true' });
    expect(answerOf(await updateCall())).toEqual({ status: 204, body: undefined, replayed: 'true' });

    const deleted = [userName, userCustom, roomName, roomCustom, joinedName, updated.name];
    const retries = { 'user retry': userRetry.text, 'room retry': roomRetry.text, 'join retry': joinRetry.text };
    expect(scanForMarkers({ folders: [dataDir], texts: { ...retries, log: server.log } }, deleted)).toEqual([]);
    await server.stop('SIGTERM');
    const readable = await readableIdempotentAnswers(dataDir);
    expect(scanForMarkers({ folders: [dataDir], texts: readable }, deleted)).toEqual([]);
    // The scan sees what is still there: the kept user's answer.
    expect(scanForMarkers({ texts: readable }, [keptName])).not.toEqual([]);
    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
    expectAnswerDeleted(await userCall());
  }, 180_000);
});

describe('the stored answer of an idempotent write goes with an erased user', () => {
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-idempotent-erasure-'));
    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a retry of the erased user\'s creation 409 answer_lost, with no marker of the profile left readable', async () => {
    const [name, custom] = ['erased-name', 'erased-custom'].map(marker);
    const key = randomUUID();
    const create = () => server.call('POST', v6('/users'), { body: { id: 'erased', name, custom_data: { note: custom } }, headers: keyed(key), anyStatus: true });
    expect((await create()).body).toMatchObject({ name });
    const requested = await server.call('POST', `/services/parley_admin/v1/${INSTANCE}/erasures`, { body: { user_id: 'erased' } });
    await eventually(async () => (await server.call('GET', `/services/parley_admin/v1/${INSTANCE}/erasures/${requested.body.id}`)).body.status === 'completed', {
      what: 'the erasure to complete',
      timeoutMs: 60_000,
    });
    const retry = await create();
    expectAnswerDeleted(retry);
    await server.stop('SIGTERM');
    expect(scanForMarkers({ folders: [dataDir], texts: { retry: retry.text, ...(await readableIdempotentAnswers(dataDir)) } }, [name, custom])).toEqual([]);
    server = await ChatServerOnDataDir.start(dataDir, INSTANCE, KEY);
  }, 180_000);
});

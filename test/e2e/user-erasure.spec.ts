import jwt from 'jsonwebtoken';
import PushNotifications from '@pusher/push-notifications-server';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MarkerFinding, scanForMarkers } from '../support/byte-scan';
import { freshExport } from '../support/fresh-export';
import { rawRequest } from '../support/raw-request';
import { ServerProcess, startProcess } from '../support/server-process';
import { eventually } from '../support/waiting';
import { rowsOf } from '../support/plaintext-log';
import { Answer, instanceCalls } from '../support/instance-calls';

/**
 * User erasure on request (GDPR Art. 17), on a real server from dist/ (the embedded default):
 * `POST /services/parley_admin/v1/<instance>/erasures` erases a user's profile, messages (as
 * tombstones in place), uploads, cursors and Beams devices; a byte scan of every file under
 * DATA_DIR (WAL included, while running and after a stop), a fresh export, every API answer
 * (the audit API too) and the server's output finds none of what it erased, and everyone
 * else's content still reads back in full.
 *
 * What the log holds in plain text from before sealing cannot be shredded: the erasure counts
 * those events (`unshreddable_plaintext_events`), and the scan allows exactly what was readable
 * in plain text in the log before the erasure, in the log and what reads it (export, audit).
 */
const INSTANCE = 'erasing';
const KEY_ID = 'erase-key';
const SECRET = 'erase-secret-4f09c1d27b';
const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;

let dataDir: string;
let server: ServerProcess;
const token = (claims: { sub?: string; su?: boolean }, instance = INSTANCE) =>
  jwt.sign({ instance, iss: `api_keys/${KEY_ID}`, ...claims }, SECRET, { algorithm: 'HS256', expiresIn: 3600 });
const su = () => token({ su: true });

const { call, v6, v2, admin, audit } = instanceCalls(INSTANCE, `${KEY_ID}:${SECRET}`, () => server.port);
const cursors = (path: string) => `/services/chatkit_cursors/v2/${INSTANCE}/cursors/0${path}`;
const devices = (path = '') => `/device_api/v1/instances/${INSTANCE}/devices/fcm${path}`;
const logFiles = () => readdirSync(dataDir).filter((f) => f.startsWith('events.sqlite')).map((f) => join(dataDir, f));
/** Every file under DATA_DIR but the event log's (read models, key store, blobs, master key, lock). */
const filesBesideTheLog = () =>
  readdirSync(dataDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.startsWith('events.sqlite'))
    .map((entry) => join(entry.parentPath, entry.name));

async function startOn(dir: string): Promise<void> {
  dataDir = dir;
  server = await startProcess('dist/src/main.js', {
    DATA_DIR: dataDir,
    INSTANCE_LOCATOR: `v1:local:${INSTANCE}`,
    INSTANCE_KEY: `${KEY_ID}:${SECRET}`,
    MASTER_KEY: '',
    // One user writes as fast as it can below: the per-user rate limit is not what this spec is about.
    RATE_LIMIT_PER_USER: '0',
    // A generous bound for read-your-writes on 2 busy cores (a 503 would be an honest "saved, not shown yet").
    READ_YOUR_WRITES_TIMEOUT_MS: '20000',
  });
}

/** Requests the erasure (202 `{id, status}`) and answers its status once it completed. */
async function erase(userId: string): Promise<any> {
  const requested = await call('POST', admin('/erasures'), { body: { user_id: userId } });
  expect(requested.status).toBe(202);
  expect(requested.body).toEqual({ id: expect.any(String), status: 'pending' });
  return eventually(
    async () => {
      const status = (await call('GET', admin(`/erasures/${requested.body.id}`))).body;
      return status.status === 'completed' && status;
    },
    { what: `the erasure of ${userId} completed`, timeoutMs: 60_000, everyMs: 50 },
  );
}

/** Events of the log, as stored, in which one of the markers is readable in plain text. */
/** How many events of the log hold one of `markers` readable in plain text (read without Parley, beside the running server). */
const eventsInPlainText = (markers: readonly string[]) => rowsOf(join(dataDir, 'events.sqlite')).filter((row) => markers.some((m) => row.data.includes(m))).length;

const send = async (room: string, text: string, as: string) =>
  (await call('POST', v6(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content: text }] }, as })).body.message_id as number;
const markersFound = (findings: readonly MarkerFinding[]) => [...new Set(findings.map((f) => f.marker))].sort();

describe('user erasure on request', () => {
  beforeAll(() => startOn(mkdtempSync(join(tmpdir(), 'parley-erasure-'))), 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers su tokens of the instance only, and refuses what it cannot erase', async () => {
    await call('POST', v6('/users'), { body: { id: 'erin', name: 'Erin' } });
    const request = (as: string | null, body: unknown = { user_id: 'erin' }) => call('POST', admin('/erasures'), { body, as, anyStatus: true });
    expect((await request(null)).status).toBe(401);
    expect((await request(token({ sub: 'erin' }))).status).toBe(403);
    expect((await request(token({ su: true }, 'another-instance'))).status).toBe(401);
    expect((await request(su(), {})).body.error).toBe('services/parley_admin/unprocessable_entity/validation_failed');
    expect((await request(su(), { user_id: 7 })).status).toBe(422);
    expect((await request(su(), { user_id: 'nobody' })).body.error).toBe('services/parley_admin/not_found/user_not_found');
    expect((await call('GET', admin('/erasures/no-such-erasure'), { anyStatus: true })).body.error).toBe('services/parley_admin/not_found/erasure_not_found');
    // Nothing was erased by the refusals.
    expect((await call('GET', v6('/users/erin'))).body.name).toBe('Erin');
    const { id } = (await request(su())).body;
    expect((await call('GET', admin(`/erasures/${id}`), { as: token({ sub: 'erin' }), anyStatus: true })).status).toBe(403);
    expect((await call('GET', admin(`/erasures/${id}`), { as: null, anyStatus: true })).status).toBe(401);
  }, 60_000);

  it("erases the user's profile, messages (tombstones in place), uploads, cursors and Beams devices from every file, answer, export and log; everyone else's stays", async () => {
    const m = Object.fromEntries(
      ['name', 'avatar', 'custom', 'renamed', 'text', 'before-edit', 'edit', 'v2-text', 'with-attachment', 'attachment-name', 'attachment-bytes', 'device'].map((w) => [w, marker(w)]),
    );
    const kept = { text: marker('bob-text'), name: marker('bob-name') };
    const alice = token({ sub: 'alice' });
    await call('POST', v6('/batch_users'), {
      body: { users: [{ id: 'alice', name: m.name, avatar_url: `https://example.com/${m.avatar}.png`, custom_data: { secret: m.custom } }, { id: 'bob', name: kept.name }] },
    });
    await call('PUT', v6('/users/alice'), { body: { name: m.renamed } });
    await call('POST', v6('/rooms'), { body: { id: 'r1', name: 'r1', user_ids: ['bob'] }, as: alice });
    const first = await send('r1', m.text, alice);
    const edited = await send('r1', m['before-edit'], alice);
    await call('PUT', v6(`/rooms/r1/messages/${edited}`), { body: { parts: [{ type: 'text/plain', content: m.edit }] }, as: alice });
    const v2Sent = (await call('POST', v2('/rooms/r1/messages'), { body: { text: m['v2-text'] }, as: alice })).body.message_id as number;
    const bytes = Buffer.from(m['attachment-bytes']);
    const announced = (await call('POST', v6('/rooms/r1/attachments'), { body: { content_type: 'text/plain', content_length: bytes.length, name: m['attachment-name'] }, as: alice })).body;
    expect((await rawRequest('', 'PUT', announced.upload_url, bytes, { 'content-type': 'text/plain' })).status).toBe(204);
    const carrying = (
      await call('POST', v6('/rooms/r1/messages'), {
        body: { parts: [{ type: 'text/plain', content: m['with-attachment'] }, { type: 'text/plain', attachment: { id: announced.attachment_id } }] },
        as: alice,
      })
    ).body.message_id as number;
    const keptId = await send('r1', kept.text, token({ sub: 'bob' }));
    await call('PUT', cursors('/rooms/r1/users/alice'), { body: { position: keptId }, as: alice });
    await call('PUT', cursors('/rooms/r1/users/bob'), { body: { position: keptId }, as: token({ sub: 'bob' }) });
    const device = (await call('POST', devices(), { body: { token: `${m.device}:APA91b${randomBytes(40).toString('base64url')}`, knownPreviousClientIds: [], metadata: {} }, as: null })).body.id;
    const beamsToken = new PushNotifications({ instanceId: INSTANCE, secretKey: SECRET } as any).generateToken('alice').token;
    await call('PUT', devices(`/${device}/user`), { as: beamsToken });
    const downloadUrl = (await call('GET', v6(`/rooms/r1/messages?limit=100`))).body.find((msg: any) => msg.id === carrying).parts[1].attachment.download_url as string;
    expect((await rawRequest('', 'GET', downloadUrl)).status).toBe(200);

    const markers = Object.values(m);
    const inPlainBefore = markersFound(scanForMarkers({ files: logFiles() }, markers));
    const plaintextEvents = eventsInPlainText(markers);
    // Message content is sealed from the start: only what is not sealed in this release may be in plain text.
    for (const sealed of [m.text, m['before-edit'], m.edit, m['v2-text'], m['with-attachment'], m['attachment-bytes']]) expect(inPlainBefore).not.toContain(sealed);

    const report = await erase('alice');
    expect(report).toMatchObject({
      status: 'completed',
      user_id: 'alice',
      erased: { user: 1, messages: 4, attachments: 1, cursors: 1, beams_devices: 1, unshreddable_plaintext_events: plaintextEvents },
      completed_at: expect.any(String),
    });

    // Every answer a client or an operator reads.
    const answers: Record<string, string> = {};
    for (const path of [
      v6('/rooms/r1/messages?limit=100'),
      v2('/rooms/r1/messages?limit=100'),
      v6('/users'),
      v6('/users/alice'),
      v6(`/rooms/r1/messages/${first}`),
      cursors('/rooms/r1'),
      devices(`/${device}/interests`),
      admin(`/erasures/${report.id}`),
    ]) {
      answers[path] = (await call('GET', path, { anyStatus: true })).text;
    }
    const auditAnswers: Record<string, string> = {};
    for (const path of [audit('/rooms/r1?limit=1000'), audit('/users/alice?limit=1000'), audit('/actors/alice?limit=1000'), audit('/actors/bob?limit=1000')]) {
      auditAnswers[path] = (await call('GET', path, { anyStatus: true })).text;
    }
    const exported = await freshExport(dataDir, INSTANCE);
    // Beside the log and what reads it, nothing: read models, key store, blobs, answers, the server's output.
    expect(scanForMarkers({ files: filesBesideTheLog(), texts: { ...answers, output: server.output.join('\n') } }, markers)).toEqual([]);
    // In the log, the export and the audit: at most what the log held in plain text before (unshreddable, counted above).
    const inLog = markersFound(scanForMarkers({ files: logFiles(), folders: [exported.folder], texts: auditAnswers }, markers));
    expect(inLog.filter((found) => !inPlainBefore.includes(found))).toEqual([]);
    expect((await rawRequest('', 'GET', downloadUrl)).status).toBe(404);

    // The messages keep their places in the room, as tombstones; everyone else's content reads back in full.
    const timeline = JSON.parse(answers[v6('/rooms/r1/messages?limit=100')]) as { id: number; user_id: string; parts: { content?: string }[] }[];
    expect(timeline.map((msg) => [msg.id, msg.parts[0].content])).toEqual([
      [keptId, kept.text],
      [carrying, 'DELETED'],
      [v2Sent, 'DELETED'],
      [edited, 'DELETED'],
      [first, 'DELETED'],
    ]);
    expect(JSON.parse(answers[v6('/users')]).map((u: { id: string; name: string }) => [u.id, u.name])).toContainEqual(['bob', kept.name]);
    expect(auditAnswers[audit('/rooms/r1?limit=1000')]).toContain(kept.text);
    expect(JSON.parse(answers[cursors('/rooms/r1')]).map((c: { user_id: string }) => c.user_id)).toEqual(['bob']);
    expect(scanForMarkers({ folders: [exported.folder] }, [kept.text, kept.name]).length).toBeGreaterThan(0);
    // The audit says what happened, by whom and when: the erasure's own events hold no personal data.
    const history = JSON.parse(auditAnswers[audit('/rooms/r1?limit=1000')]).events as { type: string; data: { id?: number; erased?: boolean } }[];
    expect(history.filter((e) => e.data.id === first).map((e) => [e.type, e.data.erased ?? false])).toEqual([
      ['MessageSent', true],
      ['MessageDeleted', false],
    ]);
    exported.remove();

    await server.stop('SIGTERM');
    expect(scanForMarkers({ files: filesBesideTheLog() }, markers)).toEqual([]);
    expect(markersFound(scanForMarkers({ files: logFiles() }, markers)).filter((found) => !inPlainBefore.includes(found))).toEqual([]);
    await startOn(dataDir);
  }, 120_000);

  it('lets the erased id be created again: the new user inherits nothing of the erased one', async () => {
    await call('POST', v6('/users'), { body: { id: 'alice', name: 'Alice, again' } });
    const again = token({ sub: 'alice' });
    expect((await call('GET', v6('/users/alice'))).body).toMatchObject({ id: 'alice', name: 'Alice, again' });
    expect((await call('GET', v6('/users/alice/rooms'), { as: again })).body).toEqual([]);
    const erased = (await call('GET', v6('/rooms/r1/messages?limit=100'))).body.filter((msg: any) => msg.user_id === 'alice');
    expect(erased.length).toBe(4);
    for (const msg of erased) expect((await call('DELETE', v6(`/rooms/r1/messages/${msg.id}`), { as: again, anyStatus: true })).status).toBeGreaterThanOrEqual(403);
    expect((await call('GET', cursors('/rooms/r1/users/alice'))).body ?? null).toBeNull();
    await call('POST', v6('/rooms'), { body: { id: 'fresh', name: 'fresh' }, as: again });
    const text = marker('fresh');
    await send('fresh', text, again);
    expect((await call('GET', v6('/rooms/fresh/messages'))).text).toContain(text);
    expect((await call('GET', audit('/rooms/fresh?limit=100'))).text).toContain(text);
  }, 60_000);

  it('erases a user deleted before, whose messages stayed in their rooms', async () => {
    const [said, named] = [marker('hal-said'), marker('hal-name')];
    await call('POST', v6('/users'), { body: { id: 'hal', name: named } });
    await call('POST', v6('/rooms'), { body: { id: 'r3', name: 'r3', user_ids: ['bob'] }, as: token({ sub: 'hal' }) });
    const id = await send('r3', said, token({ sub: 'hal' }));
    await call('DELETE', v6('/users/hal'));
    // A user's delete leaves its messages, as Chatkit did.
    expect((await call('GET', v6('/rooms/r3/messages'))).text).toContain(said);

    const report = await erase('hal');
    expect(report.erased).toMatchObject({ user: 0, messages: 1 });
    expect((await call('GET', v6('/rooms/r3/messages'))).body.map((m: { id: number; parts: { content: string }[] }) => [m.id, m.parts[0].content])).toEqual([[id, 'DELETED']]);
    const exported = await freshExport(dataDir, INSTANCE);
    const answers = { timeline: (await call('GET', v6('/rooms/r3/messages'))).text, audit: (await call('GET', audit('/rooms/r3?limit=100'))).text };
    expect(scanForMarkers({ files: [...filesBesideTheLog(), ...logFiles()], folders: [exported.folder], texts: answers }, [said])).toEqual([]);
    exported.remove();
  }, 60_000);

  it('erases everything the user wrote before it completed under concurrent sends and profile updates; the writes after it are refused', async () => {
    const created = marker('dave-created');
    await call('POST', v6('/users'), { body: { id: 'dave', name: created } });
    await call('POST', v6('/rooms'), { body: { id: 'r2', name: 'r2', user_ids: ['bob'] }, as: token({ sub: 'dave' }) });
    const dave = token({ sub: 'dave' });
    const written: { marker: string; kind: 'send' | 'profile'; status: number; answeredAt: number }[] = [];
    let erasing = false;
    const writer = async (n: number) => {
      for (let i = 0; ; i++) {
        const text = marker(`dave-${n}-${i}`);
        const kind = i % 5 === 4 ? 'profile' : 'send';
        const answer =
          kind === 'profile'
            ? await call('PUT', v6('/users/dave'), { body: { name: text }, anyStatus: true })
            : await call('POST', v6('/rooms/r2/messages'), { body: { parts: [{ type: 'text/plain', content: text }] }, as: dave, anyStatus: true });
        // 503 projection_lag says the write was saved (not shown yet): it is stored all the same.
        const saved = answer.status < 300 || (answer.status === 503 && String(answer.body?.error).endsWith('projection_lag'));
        written.push({ marker: text, kind, status: saved ? 200 : answer.status, answeredAt: Date.now() });
        if (!saved) return; // the user is gone
        if (!erasing && written.length >= 40) erasing = true;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await eventually(() => erasing, { what: 'forty writes by dave' });
    const report = await erase('dave');
    const completedAt = Date.now();
    await Promise.all(writers);

    const stored = written.filter((w) => w.status < 300);
    const storedSends = stored.filter((w) => w.kind === 'send').map((w) => w.marker);
    const storedProfiles = [created, ...stored.filter((w) => w.kind === 'profile').map((w) => w.marker)];
    expect(stored.length).toBeGreaterThanOrEqual(40);
    // Each writer was refused once the user was gone; nothing was stored after the erasure completed.
    const refused = written.filter((w) => w.status >= 300);
    expect(refused.length).toBe(4);
    expect(refused.filter((w) => ![401, 403, 404].includes(w.status))).toEqual([]);
    expect(written.filter((w) => w.answeredAt > completedAt && w.status < 300)).toEqual([]);
    // Every message stored before the erasure completed became a tombstone.
    expect(report.erased.messages).toBe(storedSends.length);
    const timeline = (await call('GET', v6('/rooms/r2/messages?limit=100'))).body as { user_id: string; parts: { content?: string }[] }[];
    expect(timeline.filter((msg) => msg.parts[0].content !== 'DELETED')).toEqual([]);

    const exported = await freshExport(dataDir, INSTANCE);
    const answers = {
      timeline: (await call('GET', v6('/rooms/r2/messages?limit=100'))).text,
      user: (await call('GET', v6('/users/dave'), { anyStatus: true })).text,
      users: (await call('GET', v6('/users'))).text,
    };
    const inAudit = { audit: (await call('GET', audit('/rooms/r2?limit=1000'))).text, actor: (await call('GET', audit('/users/dave?limit=1000'), { anyStatus: true })).text };
    const all = [...storedSends, ...storedProfiles];
    expect(scanForMarkers({ files: filesBesideTheLog(), texts: answers }, all)).toEqual([]);
    // No message anywhere, the log included; the profile updates only as far as the log held them in plain text (counted as unshreddable).
    expect(scanForMarkers({ files: logFiles(), folders: [exported.folder], texts: inAudit }, storedSends)).toEqual([]);
    expect(report.erased.unshreddable_plaintext_events).toBe(eventsInPlainText(storedProfiles));
    exported.remove();
  }, 120_000);
});

describe('user erasure with an API process beside a projector worker', () => {
  let api: ServerProcess | undefined;
  let worker: ServerProcess | undefined;
  afterAll(async () => {
    await Promise.all([api?.stop('SIGKILL'), worker?.stop('SIGKILL')]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is run by the API process, which waits for the worker to fold each step', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'parley-erasure-separate-'));
    const env = { DATA_DIR: dataDir, INSTANCE_LOCATOR: `v1:local:${INSTANCE}`, INSTANCE_KEY: `${KEY_ID}:${SECRET}`, MASTER_KEY: '' };
    worker = await startProcess('dist/src/main.projector.js', env, /projector worker running/);
    api = await startProcess('dist/src/main.api.js', env);
    server = api;
    const text = marker('separate');
    await call('POST', v6('/batch_users'), { body: { users: [{ id: 'fay', name: 'Fay' }, { id: 'gus', name: 'Gus' }] } });
    const fay = token({ sub: 'fay' });
    await call('POST', v6('/rooms'), { body: { id: 'r9', name: 'r9', user_ids: ['gus'] }, as: fay });
    await send('r9', text, fay);
    const kept = marker('separate-kept');
    await send('r9', kept, token({ sub: 'gus' }));

    const report = await erase('fay');
    expect(report.erased).toMatchObject({ user: 1, messages: 1 });
    expect((await call('GET', v6('/rooms/r9/messages'))).body.map((m: { parts: { content: string }[] }) => m.parts[0].content)).toEqual([kept, 'DELETED']);
    expect((await call('GET', v6('/users/fay'), { anyStatus: true })).status).toBe(404);
    const history = (await call('GET', audit('/rooms/r9?limit=100'))).text;
    expect(history).toContain(kept);
    expect(history).not.toContain(text);
  }, 120_000);
});

import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { scanForMarkers } from '../support/byte-scan';
import { freshExport } from '../support/fresh-export';
import { answerOf } from '../support/json-call';
import { eventually } from '../support/waiting';
import { Answer, chat, FaultLab, health, INSTANCE, processEnv, tokenFor } from './process-client';

const marker = (what: string) => `MARKER-${what}-${randomBytes(6).toString('hex')}`;
/** Enough messages for the erasure to take several pages (500 each), so that the kill lands between two of them. */
const SENT = 1_500;

async function admin(port: number, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}/services/parley_admin/v1/${INSTANCE}${path}`, {
    method,
    headers: { authorization: `Bearer ${tokenFor({ su: true })}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return answerOf(response);
}

/** The erasure events the log holds (read without Parley), by type. */
function erasureEventsIn(dir: string): Record<string, number> {
  const db = new Database(join(dir, 'events.sqlite'), { readonly: true });
  try {
    const rows = db.prepare("SELECT type, count(*) AS n FROM events WHERE type LIKE 'Erasure%' GROUP BY type").all() as { type: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.type, r.n]));
  } finally {
    db.close();
  }
}

/**
 * kill -9 of the embedded server in the middle of an erasure (between two of its checkpoints):
 * the restarted server resumes it from its last step and finishes it, every message of the
 * user erased once and counted once, nothing of anyone else's lost.
 */
describe('an erasure across a kill -9 of the embedded server', () => {
  const lab = new FaultLab();
  afterAll(() => lab.cleanUp());

  it('is finished by the restarted server, from where it stood', async () => {
    const dir = lab.dataDir();
    // One user sends them all: the per-user rate limit is not what this test is about.
    const env = processEnv(dir, { RATE_LIMIT_PER_USER: '0' });
    let server = await lab.start('dist/src/main.js', env);
    const ann = marker('ann');
    const kept = marker('kept');
    expect((await chat(server.port, 'POST', '/users', { id: 'ann', name: 'Ann' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/users', { id: 'ben', name: 'Ben' })).status).toBe(201);
    expect((await chat(server.port, 'POST', '/rooms', { id: 'r1', name: 'r1', user_ids: ['ben'] }, { sub: 'ann' })).status).toBe(201);
    let next = 0;
    const sender = async () => {
      while (next < SENT) {
        const i = next++;
        const sent = await chat(server.port, 'POST', '/rooms/r1/messages', { parts: [{ type: 'text/plain', content: `${ann}-${i}` }] }, { sub: 'ann' });
        expect(sent.status).toBe(201);
      }
    };
    await Promise.all(Array.from({ length: 8 }, sender));
    expect((await chat(server.port, 'POST', '/rooms/r1/messages', { parts: [{ type: 'text/plain', content: kept }] }, { sub: 'ben' })).status).toBe(201);

    const requested = await admin(server.port, 'POST', '/erasures', { user_id: 'ann' });
    expect(requested.status).toBe(202);
    const id = requested.body.id as string;
    // Killed once the erasure has checkpointed a page of messages, before it completed.
    await eventually(async () => (await admin(server.port, 'GET', `/erasures/${id}`)).body.step === 'messages', { what: 'a page of messages erased', everyMs: 2 });
    await server.stop('SIGKILL');
    const beforeRestart = erasureEventsIn(dir);
    expect(beforeRestart.ErasureCompleted).toBeUndefined();
    expect(beforeRestart.ErasureProgressed).toBeGreaterThanOrEqual(3);

    server = await lab.start('dist/src/main.js', env);
    await eventually(async () => (await health(server.port)).status === 200, { what: 'the restarted server healthy' });
    const done = await eventually(
      async () => {
        const status = (await admin(server.port, 'GET', `/erasures/${id}`)).body;
        return status.status === 'completed' && status;
      },
      { what: 'the erasure completed after the restart', timeoutMs: 60_000, everyMs: 50 },
    );
    expect(done.erased).toMatchObject({ user: 1, messages: SENT });
    // It resumed from its last checkpoint: the steps before the kill were not run again.
    expect(erasureEventsIn(dir).ErasureProgressed).toBeGreaterThan(beforeRestart.ErasureProgressed);
    expect((await chat(server.port, 'GET', '/users/ann')).status).toBe(404);
    const newest = (await chat(server.port, 'GET', '/rooms/r1/messages?limit=100')).body as { user_id: string; parts: { content: string }[] }[];
    expect(newest.map((m) => m.parts[0].content)).toEqual([kept, ...Array(99).fill('DELETED')]);

    const exported = await freshExport(dir, INSTANCE);
    const readModels = ['read-models.sqlite', 'search.sqlite'].flatMap((file) => ['', '-wal', '-shm'].map((suffix) => join(dir, `${file}${suffix}`)));
    expect(scanForMarkers({ files: readModels, folders: [exported.folder] }, [ann])).toEqual([]);
    expect(scanForMarkers({ folders: [exported.folder] }, [kept]).length).toBeGreaterThan(0);
    exported.remove();
  }, 180_000);
});

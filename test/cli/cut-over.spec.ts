import Database from 'better-sqlite3';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../support/cli-process';
import { freshExport } from '../support/fresh-export';
import { newDataDir, Parley, startParley } from './cli-support';

/**
 * A live cut-over from one Parley to another with the built CLIs as processes: the source keeps
 * serving while it is exported and imported, the target serves reads from the first import,
 * then a later export, which overlaps the first (it holds the whole history again), is imported
 * over it. Nothing is duplicated: not a user, a room or a message, whichever export is imported
 * again and in whichever order; and a write retried on the target with the `Idempotency-Key`
 * it had on the source is answered as the source answered it, not made a second time.
 */
const INSTANCE = 'cutover';

/* eslint-disable @typescript-eslint/no-explicit-any */
async function ok(res: Promise<{ status: number; body: any }>): Promise<any> {
  const { status, body } = await res;
  if (status >= 300) throw new Error(`unexpected ${status}: ${JSON.stringify(body)}`);
  return body;
}

/** A write with an `Idempotency-Key` (the wire contract of docs/idempotency.md). */
async function keyed(p: Parley, path: string, key: string, body: unknown, as: { sub?: string; su?: boolean }): Promise<{ status: number; replayed: string | null; body: any }> {
  const response = await fetch(`http://127.0.0.1:${p.server.httpPort}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.token(as)}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.status, replayed: response.headers.get('idempotent-replayed'), body: await response.json() };
}

/** What the test compares between source and target: users, rooms, every room's messages (v6, oldest first). */
async function contents(p: Parley): Promise<{ users: any[]; rooms: any[]; messages: Record<string, any[]> }> {
  const users = await ok(p.request('GET', p.chat('/users?limit=100')));
  const rooms = await ok(p.request('GET', p.chat('/rooms?include_private=true')));
  const messages: Record<string, any[]> = {};
  for (const room of rooms) {
    const page = await ok(p.request('GET', p.chat(`/rooms/${room.id}/messages?limit=100`)));
    messages[room.id] = page.map((m: any) => ({ id: m.id, user_id: m.user_id, parts: m.parts, deleted: m.deleted_at !== undefined })).reverse();
  }
  return { users, rooms, messages };
}

function logIds(dataDir: string): string[] {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT event_id FROM events ORDER BY position').all() as { event_id: string }[]).map((r) => r.event_id);
  } finally {
    db.close();
  }
}

const eventLines = (folder: string) => readFileSync(join(folder, 'events.ndjson'), 'utf8').split('\n').filter(Boolean);

async function importInto(dataDir: string, folder: string): Promise<string> {
  const exit = await runCli('import', [folder], { DATA_DIR: dataDir });
  if (exit.code !== 0) throw new Error(`import exited with ${exit.code ?? exit.signal}: ${exit.stderr}`);
  return exit.stdout;
}

describe('a live cut-over: export, import, export again later, import again', () => {
  const source = newDataDir();
  const target = newDataDir();
  const exports: { folder: string; remove(): void }[] = [];
  let src: Parley;
  let dst: Parley | undefined;
  /** The source's answer to the keyed send (its answer "lost" on the way to the app). */
  let keyedSend: { status: number; body: any };

  beforeAll(async () => {
    src = await startParley(source, INSTANCE);
    copyFileSync(join(source, 'master.key'), join(target, 'master.key'));
  }, 30_000);
  afterAll(async () => {
    await dst?.close();
    await src.close();
    for (const e of exports) e.remove();
  });

  it('the first export, imported while the source serves: the target answers as the source did then', async () => {
    const as = (sub: string) => src.token({ sub });
    await ok(src.request('POST', src.chat('/batch_users'), { body: { users: ['alice', 'bob'].map((id) => ({ id, name: id.toUpperCase() })) } }));
    await ok(src.request('POST', src.chat('/rooms'), { body: { id: 'general', name: 'general', user_ids: ['bob'] }, token: as('alice') }));
    for (const text of ['one', 'two', 'three']) {
      await ok(src.request('POST', src.chat('/rooms/general/messages'), { body: { parts: [{ type: 'text/plain', content: text }] }, token: as('alice') }));
    }
    const first = await freshExport(source, INSTANCE);
    exports.push(first);
    const imported = await importInto(target, first.folder);
    expect(imported).toContain(`${eventLines(first.folder).length} events appended (0 already there)`);

    dst = await startParley(target, INSTANCE);
    expect(await contents(dst)).toEqual(await contents(src));
    await dst.close();
    dst = undefined;
  }, 60_000);

  it('a later export overlaps the first; imported over it, only what is new is appended, and again nothing', async () => {
    const as = (sub: string) => src.token({ sub });
    await ok(src.request('POST', src.chat('/users'), { body: { id: 'carol', name: 'Carol' } }));
    await ok(src.request('PUT', src.chat('/rooms/general'), { body: { name: 'General' } }));
    const four = await ok(src.request('POST', src.chat('/rooms/general/messages', 'v2'), { body: { text: 'four' }, token: as('bob') }));
    await ok(src.request('PUT', src.chat(`/rooms/general/messages/${four.message_id}`), { body: { parts: [{ type: 'text/plain', content: 'four, edited' }] }, token: as('bob') }));
    const [oldest] = (await ok(src.request('GET', src.chat('/rooms/general/messages?limit=100')))).slice(-1);
    await ok(src.request('DELETE', src.chat(`/rooms/general/messages/${oldest.id}`), { token: as('alice') }));
    await ok(src.request('POST', src.chat('/rooms'), { body: { id: 'later', name: 'later' }, token: as('carol') }));
    keyedSend = await keyed(src, src.chat('/rooms/later/messages'), 'app-job-42', { parts: [{ type: 'text/plain', content: 'sent once' }] }, { sub: 'carol' });
    expect(keyedSend.status).toBe(201);
    expect((await keyed(src, src.chat('/users'), 'app-job-43', { id: 'dave', name: 'Dave' }, { su: true })).status).toBe(201);

    const [first] = exports;
    const second = await freshExport(source, INSTANCE);
    exports.push(second);
    const before = eventLines(first.folder);
    const after = eventLines(second.folder);
    // The same events in the same order (a message deleted since is exported erased: its key is gone on the source).
    const idOf = (line: string) => JSON.parse(line).id;
    expect(after.slice(0, before.length).map(idOf)).toEqual(before.map(idOf));
    expect(await importInto(target, second.folder)).toContain(`${after.length - before.length} events appended (${before.length} already there)`);
    expect(await importInto(target, second.folder)).toContain(`0 events appended (${after.length} already there)`);
    // The older export imported after the newer one is all there already.
    expect(await importInto(target, first.folder)).toContain(`0 events appended (${before.length} already there)`);

    const ids = logIds(target);
    expect(ids).toEqual(after.map(idOf));
    expect(new Set(ids).size).toBe(ids.length);
  }, 90_000);

  it('the target then answers every read as the source does: each user, room and message once', async () => {
    dst = await startParley(target, INSTANCE);
    const there = await contents(dst);
    expect(there).toEqual(await contents(src));
    expect(there.users.map((u) => u.id).sort()).toEqual(['alice', 'bob', 'carol', 'dave']);
    expect(there.rooms.map((r) => r.id).sort()).toEqual(['general', 'later']);
    const general = there.messages.general.filter((m) => !m.deleted).map((m) => m.parts[0].content);
    expect(general).toEqual(['two', 'three', 'four, edited']);
    expect(there.messages.later.map((m) => m.parts[0].content)).toEqual(['sent once']);
    const all = Object.values(there.messages).flat().map((m) => m.id);
    expect(new Set(all).size).toBe(all.length);
    // The message deleted on the source after the first import is shredded on the target too: its key is gone there.
    const fromTarget = await freshExport(target, INSTANCE);
    exports.push(fromTarget);
    const [deleted] = eventLines(fromTarget.folder).map((l) => JSON.parse(l)).filter((e) => e.type === 'MessageSent' && e.data.id === 1);
    expect(deleted.data).toMatchObject({ parts: [], erased: true });
  }, 60_000);

  it('an import beside the running target: a keyed write it carries is not made again by a retry at once after it', async () => {
    const sent = await keyed(src, src.chat('/rooms/general/messages'), 'app-job-44', { parts: [{ type: 'text/plain', content: 'sent before the last import' }] }, { sub: 'alice' });
    expect(sent.status).toBe(201);
    const third = await freshExport(source, INSTANCE);
    exports.push(third);
    // The target serves meanwhile, and has looked keys up since it started (a keyed request it refused changes nothing).
    const refused = await keyed(dst!, dst!.chat('/rooms/general/messages'), 'app-job-refused', { parts: 'not parts' }, { sub: 'alice' });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    // The import is another writer of its log.
    expect(await importInto(target, third.folder)).toMatch(/: 1 events? appended/);
    const retried = await keyed(dst!, dst!.chat('/rooms/general/messages'), 'app-job-44', { parts: [{ type: 'text/plain', content: 'sent before the last import' }] }, { sub: 'alice' });
    expect(retried).toEqual({ status: 201, replayed: 'true', body: sent.body });
    const general = await ok(dst!.request('GET', dst!.chat('/rooms/general/messages?limit=100')));
    expect(general.filter((m: any) => m.parts?.[0]?.content === 'sent before the last import').map((m: any) => m.id)).toEqual([sent.body.message_id]);
  }, 60_000);

  it('writes retried on the target with the keys they had on the source are not made again: a send answered with its message_id, a user 409 answer_lost', async () => {
    const retried = await keyed(dst!, dst!.chat('/rooms/later/messages'), 'app-job-42', { parts: [{ type: 'text/plain', content: 'sent once' }] }, { sub: 'carol' });
    expect(retried).toEqual({ status: keyedSend.status, replayed: 'true', body: keyedSend.body });
    const later = await ok(dst!.request('GET', dst!.chat('/rooms/later/messages?limit=100')));
    expect(later.map((m: any) => m.id)).toEqual([keyedSend.body.message_id]);
    // A keyed write whose answer is not in the log (a user's, stored sealed beside the source's read models) is not made again either.
    const user = await keyed(dst!, dst!.chat('/users'), 'app-job-43', { id: 'dave', name: 'Dave' }, { su: true });
    expect(user).toMatchObject({ status: 409, body: { error: 'services/chatkit/conflict/idempotency_key_answer_lost' } });
    // A new send on the target gets an id above every id the source handed out.
    const next = await ok(dst!.request('POST', dst!.chat('/rooms/later/messages'), { body: { parts: [{ type: 'text/plain', content: 'after' }] }, token: dst!.token({ sub: 'carol' }) }));
    expect(next.message_id).toBeGreaterThan(keyedSend.body.message_id);
  }, 30_000);

  it('a target that took writes before a later import: the import stops where the histories diverge, saying why, and duplicates nothing', async () => {
    await dst!.close();
    dst = undefined;
    const idsBefore = logIds(target);
    await ok(src.request('POST', src.chat('/rooms/later/messages'), { body: { parts: [{ type: 'text/plain', content: 'on the source' }] }, token: src.token({ sub: 'carol' }) }));
    const third = await freshExport(source, INSTANCE);
    exports.push(third);
    const exit = await runCli('import', [third.folder], { DATA_DIR: target });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/stream messages-cutover\.later holds another event at revision 1 .*the target took writes of its own after an earlier import/);
    // Everything before the divergence was there already: nothing was appended.
    expect(logIds(target)).toEqual(idsBefore);
  }, 60_000);
});

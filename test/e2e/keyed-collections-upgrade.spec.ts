import Database from 'better-sqlite3';
import { join } from 'node:path';
import { runCli } from '../support/cli-process';
import { textMessage as text, UpgradeLab } from '../support/upgrade-lab';
import { messageReads } from '../support/upgrade-message-reads';

/**
 * An upgrade onto a data directory whose messages, thread replies and message search were kept
 * in columns by an `id` column, times as text (the release before:
 * test/support/release-before-keyed-collections.ts): this release keys them by their fields and
 * keeps times as numbers when it makes their tables, and reads and writes the tables an earlier
 * release made as they are (each table says its layout), so nothing is rebuilt on upgrade;
 * `npm run rebuild` of those projections makes them anew, keyed.
 */
const INSTANCE = 'keyed-upgrade';
const KEY = 'upgrade-key:upgrade-secret-5d21c0e7';
const RELEASE_BEFORE = 'dist/test/support/release-before-keyed-collections.js';

const lab = new UpgradeLab(INSTANCE, KEY);
const { token, start, stop, env } = lab;
const { call, alice, found, reads } = messageReads(lab);

/** Whether each collection's table keeps an `id` column, or is keyed by its fields. */
function layouts(): Record<string, 'id' | 'key'> {
  const of = (file: string, table: string): 'id' | 'key' => {
    const db = new Database(join(lab.dataDir, file), { readonly: true });
    try {
      const names = (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((c) => c.name);
      expect(names).toContain('f_instance_id');
      return names.includes('id') ? 'id' : 'key';
    } finally {
      db.close();
    }
  };
  return {
    messages: of('read-models.sqlite', 'rm_messages_v1'),
    thread_replies: of('read-models.sqlite', 'rm_thread_replies_v2'),
    message_search: of('search.sqlite', 'rm_message_search_v1'),
  };
}
const BEFORE = { messages: 'id', thread_replies: 'id', message_search: 'id' };

describe('an upgrade onto messages, thread replies and search kept by an id column', () => {
  afterAll(() => lab.cleanUp());

  it('reads and writes them as they are, with nothing rebuilt; a rebuild keys them by their fields, answering the same', async () => {
    await start(RELEASE_BEFORE, { PROJECTOR_THREAD: 'false' });
    await call('POST', '/batch_users', { body: { users: ['alice', 'bob'].map((id) => ({ id, name: id })) } });
    await call('POST', '/rooms', { body: { id: 'r1', name: 'r1', user_ids: ['alice', 'bob'] } });
    const first = (await call('POST', '/rooms/r1/messages', { body: text('old alpha words'), as: alice() })).message_id as number;
    const doomed = (await call('POST', '/rooms/r1/messages', { body: text('doomed gamma'), as: alice() })).message_id as number;
    await call('POST', `/rooms/r1/messages/${first}/replies`, { body: text('reply beta'), as: token({ sub: 'bob' }) });
    expect(await found('alpha')).toEqual([first]);
    const old = await reads(first);
    await stop();
    expect(layouts()).toEqual(BEFORE);

    await start('dist/src/main.js');
    expect(await reads(first)).toEqual(old);
    expect(await found('beta')).toHaveLength(1);
    // Written to as they are: a send, an edit, a delete.
    const fresh = (await call('POST', '/rooms/r1/messages', { body: text('fresh delta'), as: alice() })).message_id as number;
    await call('PUT', `/rooms/r1/messages/${first}`, { body: text('edited epsilon'), as: alice() });
    await call('DELETE', `/rooms/r1/messages/${doomed}`);
    expect(await found('delta')).toEqual([fresh]);
    expect(await found('epsilon')).toEqual([first]);
    expect(await found('alpha')).toEqual([]);
    expect(await found('gamma')).toEqual([]);
    const upgraded = await reads(first);
    expect(upgraded.messages.map((m: { id: number; parts: { content: string }[] }) => [m.id, m.parts[0].content])).toEqual([
      [fresh, 'fresh delta'],
      [first, 'edited epsilon'],
    ]);
    await stop();
    expect(layouts()).toEqual(BEFORE);

    const rebuilt = await runCli('rebuild', ['messages', 'threads', 'message_search'], env());
    expect(rebuilt.code).toBe(0);
    expect(layouts()).toEqual({ messages: 'key', thread_replies: 'id', message_search: 'key' });
    await start('dist/src/main.js');
    expect(await reads(first)).toEqual(upgraded);
    expect(await found('delta')).toEqual([fresh]);
    expect(await found('epsilon')).toEqual([first]);
    expect(await found('beta')).toHaveLength(1);
    expect(await found('gamma')).toEqual([]);
  }, 180_000);
});

import Database from 'better-sqlite3';
import { join } from 'node:path';
import { runCli } from '../support/cli-process';
import { textMessage as text, UpgradeLab } from '../support/upgrade-lab';
import { messageReads } from '../support/upgrade-message-reads';

/**
 * An upgrade onto a data directory whose messages, thread replies and message search were
 * folded as JSON documents (the release before: test/support/release-before-read-model-columns.ts):
 * this release keeps them in columns when it makes their tables, and reads and writes the tables
 * an earlier release made as they are (each table says its layout), so nothing is rebuilt on
 * upgrade; `npm run rebuild` of those projections makes them anew, in columns.
 */
const INSTANCE = 'columns-upgrade';
const KEY = 'upgrade-key:upgrade-secret-5d21c0e7';
const RELEASE_BEFORE = 'dist/test/support/release-before-read-model-columns.js';

const lab = new UpgradeLab(INSTANCE, KEY);
const { token, start, stop, env } = lab;
const { call, alice, found, reads } = messageReads(lab);

/** Whether each collection's table holds JSON documents (`doc`) or columns. */
function layouts(): Record<string, 'documents' | 'columns'> {
  const of = (file: string, table: string): 'documents' | 'columns' => {
    const db = new Database(join(lab.dataDir, file), { readonly: true });
    try {
      const names = (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((c) => c.name);
      expect(names).not.toEqual([]);
      return names.includes('doc') ? 'documents' : 'columns';
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

describe('an upgrade onto messages, thread replies and search folded as JSON documents', () => {
  afterAll(() => lab.cleanUp());

  it('reads and writes them as they are, with nothing rebuilt; a rebuild makes them anew in columns, answering the same', async () => {
    await start(RELEASE_BEFORE, { PROJECTOR_THREAD: 'false' });
    await call('POST', '/batch_users', { body: { users: ['alice', 'bob'].map((id) => ({ id, name: id })) } });
    await call('POST', '/rooms', { body: { id: 'r1', name: 'r1', user_ids: ['alice', 'bob'] } });
    const first = (await call('POST', '/rooms/r1/messages', { body: text('old alpha words'), as: alice() })).message_id as number;
    const doomed = (await call('POST', '/rooms/r1/messages', { body: text('doomed gamma'), as: alice() })).message_id as number;
    await call('POST', `/rooms/r1/messages/${first}/replies`, { body: text('reply beta'), as: token({ sub: 'bob' }) });
    expect(await found('alpha')).toEqual([first]);
    await stop();
    expect(layouts()).toEqual({ messages: 'documents', thread_replies: 'documents', message_search: 'documents' });

    await start('dist/src/main.js');
    const before = await reads(first);
    expect(before.messages.map((m: { id: number }) => m.id)).toEqual([doomed, first]);
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
    expect(layouts()).toEqual({ messages: 'documents', thread_replies: 'documents', message_search: 'documents' });

    const rebuilt = await runCli('rebuild', ['messages', 'threads', 'message_search'], env());
    expect(rebuilt.code).toBe(0);
    expect(layouts()).toEqual({ messages: 'columns', thread_replies: 'columns', message_search: 'columns' });
    await start('dist/src/main.js');
    expect(await reads(first)).toEqual(upgraded);
    expect(await found('delta')).toEqual([fresh]);
    expect(await found('epsilon')).toEqual([first]);
    expect(await found('beta')).toHaveLength(1);
    expect(await found('gamma')).toEqual([]);
  }, 180_000);
});

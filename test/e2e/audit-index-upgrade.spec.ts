import Database from 'better-sqlite3';
import { join } from 'node:path';
import { textMessage as text, UpgradeLab } from '../support/upgrade-lab';
import { eventually } from '../support/waiting';

/**
 * An upgrade onto a data directory whose audit index was folded as lines in columns (version 4,
 * the release before: test/support/release-before-audit-pointers.ts): this release folds
 * audit_index_v5 (log pointers) from the log's start at its first start, and the audit answers
 * the same, and goes on indexing what comes after.
 */
const INSTANCE = 'audit-upgrade';
const KEY = 'upgrade-key:upgrade-secret-8b3e61d4';
const RELEASE_BEFORE = 'dist/test/support/release-before-audit-pointers.js';

const lab = new UpgradeLab(INSTANCE, KEY);
const { call, token, v6, start } = lab;
const audit = (path: string) => `/services/parley_audit/v1/${INSTANCE}${path}`;
const alice = () => token({ sub: 'alice' });

/** What the audit answers: alice's actions, the API key's in pages of two, and the room's history (edits and deletions found through the index). */
async function trails() {
  const pages: unknown[] = [];
  for (let from: string | null = null; ; ) {
    const page: { events: unknown[]; next: string | null } = await call('GET', audit(`/actors/key:${KEY.split(':')[0]}?limit=2${from ? `&from=${from}` : ''}`));
    pages.push(page);
    if (!(from = page.next)) break;
  }
  return {
    alice: await call('GET', audit('/actors/alice')),
    key: pages,
    room: await call('GET', audit('/rooms/r1')),
  };
}

/** The columns of a table of read-models.sqlite (none: no such table). */
function columnsOf(table: string): string[] {
  const db = new Database(join(lab.dataDir, 'read-models.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((c) => c.name);
  } finally {
    db.close();
  }
}

describe('an upgrade to the audit index as log pointers', () => {
  afterAll(() => lab.cleanUp());

  it('folds it anew and answers every audit view the same, and what comes after too', async () => {
    await start(RELEASE_BEFORE, { PROJECTOR_THREAD: 'false' });
    await call('POST', v6('/batch_users'), { body: { users: ['alice', 'bob'].map((id) => ({ id, name: id })) } });
    await call('POST', v6('/rooms'), { body: { id: 'r1', name: 'r1', user_ids: ['alice', 'bob'] } });
    const first = (await call('POST', v6('/rooms/r1/messages'), { body: text('first'), as: alice() })).message_id as number;
    const second = (await call('POST', v6('/rooms/r1/messages'), { body: text('second'), as: alice() })).message_id as number;
    await call('PUT', v6(`/rooms/r1/messages/${first}`), { body: text('first, edited'), as: alice() });
    await call('DELETE', v6(`/rooms/r1/messages/${second}`));
    const before = await trails();
    expect(before.alice.events.map((e: { type: string }) => e.type)).toEqual(['MessageSent', 'MessageSent', 'MessageEdited']);
    expect(before.key.length).toBeGreaterThan(2);
    await lab.stop();
    expect(columnsOf('rm_audit_index_v4')).toContain('id');

    await start('dist/src/main.js');
    // Folded from the log's start at the first start (listed alone, as version 4 was): the audit
    // answers 503 audit_index_lag meanwhile, and then as it did.
    const upgraded = await eventually(() => trails().catch(() => null), { what: 'the audit answering', timeoutMs: 60_000, everyMs: 100 });
    expect(upgraded).toEqual(before);
    expect(columnsOf('rm_audit_index_v5')).toEqual(['key_n', 'position', 'stream_type_n', 'revision']);

    const third = (await call('POST', v6('/rooms/r1/messages'), { body: text('third'), as: alice() })).message_id as number;
    await call('PUT', v6(`/rooms/r1/messages/${third}`), { body: text('third, edited'), as: alice() });
    const after = await trails();
    expect(after.alice.events.map((e: { type: string }) => e.type)).toEqual(['MessageSent', 'MessageSent', 'MessageEdited', 'MessageSent', 'MessageEdited']);
    expect(after.room.events.slice(0, before.room.events.length)).toEqual(before.room.events);
    expect(after.room.events.slice(before.room.events.length).map((e: { type: string }) => e.type)).toEqual(['MessageSent', 'MessageEdited']);
  }, 180_000);
});

/**
 * Message search (issue 22) through HTTP on a real server: what it finds is what a scan of the
 * messages finds (diacritics, CJK, phrases), never a message of a room the caller cannot read
 * (not a member, left, removed), never a deleted message or an edited message's earlier text,
 * and nothing of those stays in the read models' files (the FTS5 index included).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { scanForMarkers } from '../support/byte-scan';
import { startTestServer, TestServer } from '../support/test-server';
import { eventually } from '../support/waiting';

/** The scan the search must agree with: case and accents folded, a message's words, a CJK run found anywhere in its text. */
const folded = (text: string) => text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]/u;
const scanMatches = (text: string, query: string): boolean => {
  const words = folded(text).split(/[^\p{L}\p{N}]+/u);
  const compact = folded(text).replace(/\s+/gu, '');
  return folded(query)
    .split(/\s+/u)
    .filter(Boolean)
    .every((term) => (CJK.test(term) ? compact.includes(term) : words.includes(term)));
};

const CORPUS = [
  'Le café est prêt',
  'CAFE closes at noon',
  'cafeteria menu: soup',
  'Ångström units and naïve résumé',
  'angstrom is tiny',
  'Resume the meeting at ten',
  '東京タワーに行きました',
  '京都は美しい',
  '東京と大阪',
  '今日は東京で会議',
  '서울에서 만나요',
  'ソウルと東京',
  'Straße und Strasse',
  'the quick brown fox',
  'quick thinking, brown eyes',
  'Fox news about the café',
  'señor niño jalapeño',
  'senor nino says hola',
  'e-mail me later',
  'email is better',
  'Ärger über Öl',
  'arger uber ol',
  'mixed 東京 and café together',
  'numbers 42 and 4242',
];
const QUERIES = [
  'cafe', 'CAFÉ', 'café', 'angstrom', 'résumé', 'resume', 'naive', '東京', '京', 'タワー', '東京タワー', '京都', '서울', '今日',
  'quick brown', 'brown', 'fox', 'nino', 'niño', 'señor', 'strasse', 'straße', 'arger', 'ÄRGER öl', 'email', '42', 'mixed café', 'noon', 'absent',
];

describe('message search', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });
  const search = (params: Record<string, string>, token?: string) =>
    s.request('GET', `/services/chatkit/v6/${s.instanceId}/search/messages?${new URLSearchParams(params)}`, { token });
  const send = async (room: string, text: string, user = 'alice', extraParts: unknown[] = []) => {
    const sent = await s.request('POST', s.chat(`/rooms/${room}/messages`), {
      body: { parts: [{ type: 'text/plain', content: text }, ...extraParts] },
      token: as(user),
    });
    expect(sent.status).toBe(201);
    return sent.body.message_id as number;
  };
  /** Every page of a search, followed through `next`. */
  const allPages = async (params: Record<string, string>, token?: string) => {
    const ids: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const page = await search({ ...params, ...(cursor && { cursor }) }, token);
      expect(page.status).toBe(200);
      ids.push(...page.body.results.map((r: any) => r.message.id));
      cursor = page.body.next;
      if (!cursor) return ids;
    }
    throw new Error('more than 50 pages');
  };
  const corpusIds = new Map<number, string>();

  beforeAll(async () => {
    s = await startTestServer();
    const users = ['alice', 'bob', 'carol', 'mallory'].map((id) => ({ id, name: id }));
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    for (const [id, priv, members] of [
      ['corpus', false, ['bob']],
      ['other', false, ['carol']],
      ['vault', true, ['carol']],
    ] as const) {
      const created = await s.request('POST', s.chat('/rooms'), { body: { id, name: id, private: priv, user_ids: members }, token: as('alice') });
      expect(created.status).toBe(201);
    }
    for (const [i, text] of CORPUS.entries()) corpusIds.set(await send('corpus', text, i % 2 ? 'bob' : 'alice'), text);
  });
  afterAll(() => s?.close());

  it('finds exactly what a scan of the messages finds, newest first, for words with diacritics, CJK text and phrases', async () => {
    for (const q of QUERIES) {
      const expected = [...corpusIds].filter(([, text]) => scanMatches(text, q)).map(([id]) => id).sort((a, b) => b - a);
      const found = await allPages({ q, room_ids: 'corpus', limit: '3' }, as('bob'));
      expect({ q, found }).toEqual({ q, found: expected });
      const ranked = await allPages({ q, room_ids: 'corpus', order: 'relevance', limit: '2' }, as('bob'));
      expect({ q, ranked: [...ranked].sort((a, b) => b - a) }).toEqual({ q, ranked: expected });
    }
  });

  it('highlights where the words stand in the text as sent, and ranks a message holding more of the words first', async () => {
    const page = await search({ q: 'cafe', room_ids: 'corpus' }, as('bob'));
    const result = page.body.results.find((r: any) => r.message.parts[0].content === 'Le café est prêt');
    expect(result.highlights).toEqual([{ part: 0, start: 3, end: 7 }]);
    expect(result.message).toMatchObject({ room_id: 'corpus', user_id: 'alice', parts: [{ type: 'text/plain', content: 'Le café est prêt' }] });
    const cjk = (await search({ q: '東京', room_ids: 'corpus' }, as('bob'))).body.results.find((r: any) => r.message.parts[0].content === '今日は東京で会議');
    expect(cjk.highlights).toEqual([{ part: 0, start: 3, end: 5 }]);
    const ranked = await search({ q: 'quick brown fox', order: 'relevance' }, as('bob'));
    expect(ranked.body.results.map((r: any) => r.message.parts[0].content)).toEqual(['the quick brown fox']);
  });

  it('searches only the rooms the caller is a member of (su: every room), and none after leaving or being removed', async () => {
    const other = await send('other', 'sesame opens other', 'carol');
    const vault = await send('vault', 'sesame opens the vault', 'carol');
    const mine = await send('corpus', 'sesame opens corpus', 'bob');
    const ids = async (token: string, params: Record<string, string> = {}) =>
      (await search({ q: 'sesame', ...params }, token)).body.results.map((r: any) => r.message.id);
    expect(await ids(as('bob'))).toEqual([mine]);
    expect(await ids(as('mallory'))).toEqual([]);
    expect(await ids(as('bob'), { room_ids: 'vault,other' })).toEqual([]);
    expect(await ids(as('carol'))).toEqual([vault, other]);
    expect(await ids(s.token({ su: true }))).toEqual([mine, vault, other]);
    expect(await ids(s.token({ su: true }), { room_ids: 'other' })).toEqual([other]);

    expect((await s.request('POST', s.chat('/users/carol/rooms/other/leave'), { token: as('carol') })).status).toBe(200);
    expect(await ids(as('carol'))).toEqual([vault]);
    expect((await s.request('PUT', s.chat('/rooms/vault/users/remove'), { body: { user_ids: ['carol'] }, token: as('alice') })).status).toBe(204);
    expect(await ids(as('carol'))).toEqual([]);
    expect(await ids(as('carol'), { room_ids: 'vault,other' })).toEqual([]);
  });

  it('filters by sender, time and attachment in the query, and pages through them', async () => {
    const before = new Date().toISOString();
    const withLink = await send('corpus', 'walrus picture', 'alice', [{ type: 'image/png', url: 'https://example.com/walrus.png' }]);
    const plain = await send('corpus', 'walrus words', 'bob');
    const ids = async (params: Record<string, string>) => (await search({ q: 'walrus', ...params }, as('bob'))).body.results.map((r: any) => r.message.id);
    expect(await ids({})).toEqual([plain, withLink]);
    expect(await ids({ user_id: 'alice' })).toEqual([withLink]);
    expect(await ids({ has_attachment: 'true' })).toEqual([withLink]);
    expect(await ids({ has_attachment: 'false' })).toEqual([plain]);
    expect(await ids({ to: before })).toEqual([]);
    expect(await ids({ from: before })).toEqual([plain, withLink]);
    const first = await search({ q: 'walrus', limit: '1' }, as('bob'));
    expect(first.body.results.map((r: any) => r.message.id)).toEqual([plain]);
    const second = await search({ q: 'walrus', limit: '1', cursor: first.body.next }, as('bob'));
    expect(second.body.results.map((r: any) => r.message.id)).toEqual([withLink]);
  });

  it('finds a reply shown in its thread alone, with its parent_id, as any message of the room; not once it is deleted', async () => {
    const parent = await send('corpus', 'kookaburra thread starts', 'alice');
    const replied = await s.request('POST', s.chat(`/rooms/corpus/messages/${parent}/replies`), {
      body: { parts: [{ type: 'text/plain', content: 'kookaburra laughs in the thread' }] },
      token: as('bob'),
    });
    expect(replied.status).toBe(201);
    const reply = replied.body.message_id as number;
    const page = await search({ q: 'kookaburra' }, as('bob'));
    expect(page.body.results.map((r: any) => [r.message.id, r.message.parent_id])).toEqual([
      [reply, parent],
      [parent, undefined],
    ]);
    expect((await search({ q: 'laughs', order: 'relevance' }, as('bob'))).body.results.map((r: any) => r.message.id)).toEqual([reply]);
    expect((await search({ q: 'kookaburra' }, as('mallory'))).body.results).toEqual([]);
    expect((await s.request('DELETE', s.chat(`/rooms/corpus/messages/${reply}`), { token: as('bob') })).status).toBe(204);
    expect((await search({ q: 'kookaburra' }, as('bob'))).body.results.map((r: any) => r.message.id)).toEqual([parent]);
  });

  it('never finds a deleted message (v6, v2, in a deleted room) nor an edited message by its earlier words; finds the edit by its new ones', async () => {
    const v6 = await send('corpus', 'platypus deleted through v6');
    const v2 = await send('corpus', 'platypus deleted through v2');
    const edited = await send('corpus', 'platypus before the edit');
    const ids = async (q: string, token = as('bob')) => (await search({ q }, token)).body.results.map((r: any) => r.message.id);
    expect(await ids('platypus')).toEqual([edited, v2, v6]);
    expect((await s.request('DELETE', s.chat(`/rooms/corpus/messages/${v6}`))).status).toBe(204);
    expect((await s.request('DELETE', s.chat(`/rooms/corpus/messages/${v2}`, 'v2'))).status).toBe(204);
    const edit = await s.request('PUT', s.chat(`/rooms/corpus/messages/${edited}`), { body: { parts: [{ type: 'text/plain', content: 'wombat after the edit' }] }, token: as('alice') });
    expect(edit.status).toBe(204);
    expect(await ids('platypus')).toEqual([]);
    expect(await ids('wombat')).toEqual([edited]);

    const created = await s.request('POST', s.chat('/rooms'), { body: { id: 'doomed', name: 'doomed', user_ids: ['bob'] }, token: as('alice') });
    expect(created.status).toBe(201);
    await send('doomed', 'quokka in a doomed room');
    expect(await ids('quokka', s.token({ su: true }))).toHaveLength(1);
    expect((await s.request('DELETE', s.chat('/rooms/doomed'))).status).toBe(204);
    expect(await ids('quokka', s.token({ su: true }))).toEqual([]);
  });

  it('finds nothing of an erased user’s messages once the erasure completed', async () => {
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'erin', name: 'Erin' } })).status).toBe(201);
    expect((await s.request('PUT', s.chat('/rooms/corpus/users/add'), { body: { user_ids: ['erin'] } })).status).toBe(204);
    await send('corpus', 'narwhal from erin', 'erin');
    await send('corpus', 'narwhal from bob', 'bob');
    const senders = async () => (await search({ q: 'narwhal' }, as('bob'))).body.results.map((r: any) => r.message.user_id);
    expect(await senders()).toEqual(['bob', 'erin']);
    const admin = `/services/parley_admin/v1/${s.instanceId}/erasures`;
    const requested = await s.request('POST', admin, { body: { user_id: 'erin' } });
    expect(requested.status).toBe(202);
    await eventually(async () => (await s.request('GET', `${admin}/${requested.body.id}`)).body.status === 'completed', {
      what: 'the erasure completed',
      timeoutMs: 60_000,
    });
    expect(await senders()).toEqual(['bob']);
  });

  it('leaves no word of a deleted or edited-away message in the read models’ files, FTS5 index included', async () => {
    // One word each, unlike any other, so the index holds it as a term of its own (FTS5 keeps a
    // term's first letters shared with the term before it: the scan looks for its last ones).
    const word = () => `zq${randomBytes(8).toString('hex')}`;
    const gone = { deleted: word(), editedAway: word(), roomDeleted: word() };
    const kept = word();
    const tail = (w: string) => w.slice(-12);
    const files = ['read-models.sqlite', 'search.sqlite'].flatMap((file) => ['', '-wal', '-shm'].map((suffix) => join(s.dataDir, `${file}${suffix}`)));
    const found = () => new Set(scanForMarkers({ files }, [...Object.values(gone), kept].map(tail)).map((f) => f.marker));

    const deleted = await send('corpus', `the ${gone.deleted} note`);
    const edited = await send('corpus', `the ${gone.editedAway} note`);
    await send('corpus', `the ${kept} note`);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'shredded', name: 'shredded' }, token: as('alice') })).status).toBe(201);
    await send('shredded', `the ${gone.roomDeleted} note`);
    for (const w of [...Object.values(gone), kept]) expect((await search({ q: w }, s.token({ su: true }))).body.results).toHaveLength(1);
    await eventually(() => found().size === 4, { what: 'every word in the read models' });

    expect((await s.request('DELETE', s.chat(`/rooms/corpus/messages/${deleted}`))).status).toBe(204);
    expect((await s.request('PUT', s.chat(`/rooms/corpus/messages/${edited}`), { body: { parts: [{ type: 'text/plain', content: 'nothing left' }] }, token: as('alice') })).status).toBe(204);
    expect((await s.request('DELETE', s.chat('/rooms/shredded'))).status).toBe(204);
    for (const w of Object.values(gone)) expect((await search({ q: w }, s.token({ su: true }))).body.results).toEqual([]);
    await eventually(() => [...found()].join() === tail(kept), { what: 'only the kept word in the read models' });
  });

  it('keeps its index in search.sqlite, apart from the other read models, and answers a search with every message sent before it', async () => {
    const tables = (file: string) => {
      const db = new Database(join(s.dataDir, file), { readonly: true, fileMustExist: true });
      try {
        return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
      } finally {
        db.close();
      }
    };
    expect(tables('search.sqlite').filter((t) => t.includes('message_search'))).not.toEqual([]);
    expect(tables('read-models.sqlite').filter((t) => t.includes('message_search'))).toEqual([]);
    // Folded in batches behind the other projections, yet a search waits for them: nothing sent before it is missed.
    const word = `zq${randomBytes(6).toString('hex')}`;
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await send('corpus', `${word} number ${i}`));
    expect((await search({ q: word }, as('bob'))).body.results.map((r: any) => r.message.id)).toEqual(sent.reverse());
  });

  it('needs room:messages:get from the caller’s global role: a role without it is refused 403', async () => {
    const authz = (path: string) => `/services/chatkit_authorizer/v2/${s.instanceId}${path}`;
    const role = await s.request('POST', authz('/roles'), { body: { name: 'no-reading', scope: 'global', permissions: ['message:create'] } });
    expect(role.status).toBe(201);
    expect((await s.request('PUT', authz('/users/mallory/roles'), { body: { name: 'no-reading' } })).status).toBe(201);
    const refused = await search({ q: 'cafe' }, as('mallory'));
    expect([refused.status, refused.body.error]).toEqual([403, 'services/chatkit/forbidden/missing_permission']);
    expect((await search({ q: 'cafe' }, as('bob'))).status).toBe(200);
  });

  it('answers a clear 4xx to a bad search, 401 without a token, and does not exist in v2', async () => {
    const bob = as('bob');
    const refused = async (params: Record<string, string>) => {
      const r = await search(params, bob);
      return [r.status, r.body.error];
    };
    expect(await refused({})).toEqual([422, 'services/chatkit/unprocessable_entity/empty_query']);
    expect(await refused({ q: '  ?! ' })).toEqual([422, 'services/chatkit/unprocessable_entity/empty_query']);
    expect(await refused({ q: 'a'.repeat(257) })).toEqual([422, 'services/chatkit/unprocessable_entity/query_too_long']);
    expect(await refused({ q: Array.from({ length: 17 }, (_, i) => `w${i}`).join(' ') })).toEqual([422, 'services/chatkit/unprocessable_entity/query_too_long']);
    expect(await refused({ q: 'x', order: 'oldest' })).toEqual([422, 'services/chatkit/unprocessable_entity/invalid_order']);
    expect(await refused({ q: 'x', cursor: 'garbage' })).toEqual([422, 'services/chatkit/unprocessable_entity/invalid_cursor']);
    expect(await refused({ q: 'x', limit: '101' })).toEqual([422, 'services/chatkit/unprocessable_entity/invalid_limit']);
    expect(await refused({ q: 'x', from: 'yesterday' })).toEqual([422, 'services/chatkit/unprocessable_entity/invalid_from']);
    expect(await refused({ q: 'x', has_attachment: 'maybe' })).toEqual([422, 'services/chatkit/unprocessable_entity/invalid_has_attachment']);
    expect(await refused({ q: 'x', room_ids: Array.from({ length: 101 }, (_, i) => `r${i}`).join(',') })).toEqual([422, 'services/chatkit/unprocessable_entity/invalid_room_ids']);
    const page = await search({ q: 'cafe', limit: '1' }, bob);
    expect(await refused({ q: 'cafe', order: 'relevance', cursor: page.body.next })).toEqual([422, 'services/chatkit/unprocessable_entity/invalid_cursor']);
    expect((await search({ q: 'cafe' }, null as unknown as string)).status).toBe(401);
    expect((await s.request('GET', `/services/chatkit/v2/${s.instanceId}/search/messages?q=cafe`)).status).toBe(404);
  });
});

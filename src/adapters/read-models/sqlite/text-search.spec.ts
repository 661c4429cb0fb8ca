import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CollectionSpec, facetToken, TextIndexSpec, TextSearch } from '../../../shared/ports/read-model-store.port';
import { layoutOfTable } from './collection-layout';
import { SqliteReadModelStore } from './sqlite-read-model-store';
import { matchExpression, relevanceScore, searchTextSql } from './text-search';

const index: TextIndexSpec = { field: 'body', facets: 'facets', order: 'seq' };

const layouts: [string, CollectionSpec['columns']][] = [
  ['as documents', undefined],
  ['kept in columns', ['seq', 'body', { name: 'facets', type: 'json' }, 'at']],
];

describe.each(layouts)('text-indexed collections in SQLite (FTS5), %s', (_layout, columns) => {
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-rm-text-'));
    file = join(dir, 'read-models.sqlite');
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([{ name: 'notes', indexes: [{ fields: ['at'] }], text: index, ...(columns && { columns }) }]);
    await store.applyBatch(
      Array.from({ length: 50 }, (_, i) => ({
        collection: 'notes',
        kind: 'put' as const,
        document: { _id: `n${i}`, seq: i + 1, body: `word${i % 5} common`, facets: [`r${i % 3}`], at: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z` },
        position: String(i + 1).padStart(20, '0'),
      })),
      {},
    );
    await store.buildDeferredIndexes(['notes']);
    await store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const plan = (search: Omit<TextSearch, 'index' | 'window' | 'limit'>): string => {
    const db = new Database(file, { readonly: true });
    try {
      const { sql, params } = searchTextSql('notes', { index, window: 1000, limit: 20, ...search }, layoutOfTable(db, 'rm_notes')!);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('; ');
    } finally {
      db.close();
    }
  };

  it('keeps the text once: in its document, or in its column with nothing stored beside it', () => {
    const db = new Database(file, { readonly: true });
    try {
      const stored = (db.prepare(`SELECT name FROM pragma_table_xinfo('rm_notes') WHERE hidden <> 2`).all() as { name: string }[]).map((c) => c.name);
      expect(stored).toEqual(columns ? ['id', 'f_seq', 'f_body', 'f_facets', 'f_at', 'position'] : ['seq', 'id', 'doc', 'position', 'text_body']);
    } finally {
      db.close();
    }
  });

  it('quotes words and facets, so no query text is read as an FTS5 operator', () => {
    expect(matchExpression({ phrases: [['a"b', 'or'], ['near']], facets: [['r1', 'r2']] })).toBe(
      'text_body : ("a""b" + "or") AND text_body : ("near") AND text_facets : ("r1" OR "r2")',
    );
  });

  it('plans newest first as a walk of the index by rowid, descending, with each row read by its key: no sort, no scan of the table', () => {
    const newest = plan({ phrases: [['common']], facets: [['r1']], where: { at: { gte: '2026' } }, order: 'newest', after: { order: 40 } });
    expect(newest).toMatch(/^SCAN rm_notes_text VIRTUAL TABLE INDEX \d+:M\w*</);
    expect(newest).toContain('SEARCH r USING INTEGER PRIMARY KEY (rowid=?)');
    expect(newest).not.toMatch(/TEMP B-TREE|SCAN r\b/);
    // FTS5 answers the order itself: its plan's flags hold "by rowid" (64) and "descending" (128).
    const flags = Number(/VIRTUAL TABLE INDEX (\d+):/.exec(newest)![1]);
    expect(flags & 192).toBe(192);
  });

  it('plans relevance as the same walk (of at most the window), reading each match’s text by its key: no sort, no scan of the table', () => {
    const ranked = plan({ phrases: [['common']], facets: [['r1']], order: 'relevance', after: { order: 40, score: 1 } });
    expect(ranked).toMatch(/^SCAN rm_notes_text VIRTUAL TABLE INDEX \d+:M/);
    expect(ranked).toContain('SEARCH r USING INTEGER PRIMARY KEY (rowid=?)');
    expect(ranked).not.toMatch(/TEMP B-TREE|SCAN r\b/);
  });

  it('ranks by how often each phrase occurs for the text’s length, every phrase weighing the same', () => {
    const words = (text: string) => text.split(' ');
    const phrases = [['quick'], ['brown', 'fox']];
    const score = (text: string) => relevanceScore(words(text), phrases, 6);
    expect(score('quick quick brown fox a b')).toBeGreaterThan(score('quick brown fox a b c'));
    expect(score('quick brown fox')).toBeGreaterThan(score('quick brown fox a b c d e f'));
    expect(score('brown fox quick')).toBeCloseTo(score('quick brown fox'));
    expect(score('fox brown')).toBe(0);
  });
});

describe('text-indexed collections in SQLite whose facets are made of their fields (facetsFrom)', () => {
  const made: TextIndexSpec = {
    ...index,
    facetsFrom: [
      { prefix: 'i', fields: ['instance'] },
      { prefix: 'r', fields: ['instance', 'room'] },
      { token: 'flagged', when: 'flag' },
    ],
  };
  const spec: CollectionSpec = {
    name: 'made',
    text: made,
    columns: ['instance', 'room', 'seq', 'body', { name: 'facets', type: 'json' }, { name: 'flag', type: 'boolean' }],
  };
  const doc = (seq: number, instance: string, room: string, flag: boolean) => ({
    _id: `d${seq}`,
    instance,
    room,
    seq,
    body: `word${seq}`,
    facets: [facetToken('i', instance), facetToken('r', instance, room), ...(flag ? ['flagged'] : [])],
    flag,
  });

  it('keeps the fields alone, reads back the facets the document had, and finds by them; a removal takes them from the index', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-rm-facets-'));
    const file = join(dir, 'search.sqlite');
    try {
      const store = new SqliteReadModelStore(file);
      await store.ensureCollections([spec]);
      const docs = [doc(1, 'acme', 'r1', true), doc(2, 'acmé', '東京 room', false), doc(3, 'acme', 'r2', false)];
      await store.applyBatch(docs.map((document, i) => ({ collection: 'made', kind: 'put', document, position: String(i + 1).padStart(20, '0') })), {});
      for (const d of docs) expect(await store.get('made', d._id)).toEqual(d);
      const found = async (...facets: string[][]) =>
        (await store.searchText('made', { index: made, phrases: [], facets, order: 'newest', window: 100, limit: 10 })).map((m) => m.document._id);
      expect(await found([facetToken('i', 'acme')])).toEqual(['d3', 'd1']);
      expect(await found([facetToken('r', 'acmé', '東京 room')])).toEqual(['d2']);
      expect(await found([facetToken('i', 'acme')], ['flagged'])).toEqual(['d1']);
      await store.applyBatch([{ collection: 'made', kind: 'delete', id: 'd1' }], {});
      expect(await found(['flagged'])).toEqual([]);
      await store.close();
      const db = new Database(file, { readonly: true });
      try {
        // Made when read (a virtual generated column: 2), not stored.
        expect(db.prepare(`SELECT hidden FROM pragma_table_xinfo('rm_made') WHERE name = 'f_facets'`).get()).toEqual({ hidden: 2 });
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import type Database from 'better-sqlite3';
import { CollectionSpec, Document, FacetSource, TextIndexSpec, TextMatch, TextSearch } from '../../../shared/ports/read-model-store.port';
import { CollectionLayout, columnDefinition, JSON_LAYOUT, layoutColumns, POSITION_COLUMN, SQL_TYPES } from './collection-layout';
import { column, field, laterPositionPutSql, table, whereClause } from './read-model-sql';

/**
 * Text-indexed collections (`CollectionSpec.text`) in SQLite: the collection's table keeps its
 * documents as every other does, keyed by the document's `order` as its rowid, and an FTS5
 * table over it (external content: the text lives once, in the documents) indexes the text and
 * the facets. Triggers keep the index in step with every insert, update and delete of the
 * table, so the port's writes stay what they are; FTS5's `secure-delete` removes a deleted or
 * replaced document's words from the index at once (not by a delete marker beside them), so
 * with the file's own `secure_delete` no word of it stays in the file.
 *
 * `columnsize=0`: no per-document sizes are kept, since nothing ranks by FTS5's `bm25()` (see
 * `relevanceScore`). Measured against the alternatives (a 2-core machine, batches of 1,000): a
 * contentless table (`content=''`) saves a tenth of the file but a search by relevance then
 * reads each match's text out of its JSON (p50 5 ms became 16 ms over 200,000 messages);
 * `contentless_delete=1` leaves a deleted message's words in the index behind a tombstone until
 * a merge; what costs most is writing few documents per transaction (32 KiB written per message
 * one at a time, 2 KiB a hundred at a time), which the background fold takes care of.
 *
 * The tokenizer folds case and diacritics (`unicode61 remove_diacritics 2`); the documents'
 * text comes split into words already (scripts without spaces a character a word), so phrase
 * queries find words of any script in a row, in the one table (a `trigram` tokenizer was
 * measured too: less CPU per write without the splitting in JavaScript, but nearly twice the
 * bytes per message, and no query of fewer than three characters, as `東京` is).
 */

/** The FTS5 table indexing a text collection's table. */
export const textTable = (collection: string): string => `${table(collection)}_text`;

/**
 * A text collection's table: the document's `order` is the rowid the index refers to. The text
 * is kept beside the document as well as in it (a STORED column) in the JSON layout: a search by
 * relevance reads the text of every match in its window, and reading a column costs a fraction
 * of taking it out of the JSON. Kept in columns (`columns`), the text, the facets and the order
 * are each a column once (the order the rowid itself), and the index reads them under the same
 * names (`text_body`, `text_facets`: generated, not stored); facets made of other fields
 * (`facetsFrom`) are not stored either, but made when read. Keyed by fields (`key`), the rows
 * are unique by them instead of by an `id` column.
 */
export function createTextCollection(
  db: Database.Database,
  collection: string,
  spec: TextIndexSpec,
  columns?: CollectionSpec['columns'],
  key?: CollectionSpec['key'],
): void {
  const t = table(collection);
  const fts = textTable(collection);
  const definition = columns
    ? `${key ? '' : 'id TEXT NOT NULL UNIQUE,\n      '}${textColumns(collection, spec, columns).join(',\n      ')},
      ${POSITION_COLUMN},
      text_body TEXT GENERATED ALWAYS AS (${column(spec.field)}) VIRTUAL,
      text_facets TEXT GENERATED ALWAYS AS (${column(spec.facets)}) VIRTUAL${key ? `,\n      UNIQUE (${key.map(column).join(', ')})` : ''}`
    : `seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      doc TEXT NOT NULL,
      ${POSITION_COLUMN},
      text_body TEXT GENERATED ALWAYS AS (${field(spec.field)}) STORED,
      text_facets TEXT GENERATED ALWAYS AS (${field(spec.facets)}) VIRTUAL`;
  const rowid = columns ? column(spec.order) : 'seq';
  db.exec(`
    CREATE TABLE "${t}" (
      ${definition}
    );
    CREATE VIRTUAL TABLE "${fts}" USING fts5(
      text_body, text_facets, content='${t}', content_rowid='${rowid.replace(/"/g, '')}', columnsize=0, tokenize='unicode61 remove_diacritics 2'
    );
    INSERT INTO "${fts}" ("${fts}", rank) VALUES ('secure-delete', 1);
    CREATE TRIGGER "${t}_text_insert" AFTER INSERT ON "${t}" BEGIN
      INSERT INTO "${fts}" (rowid, text_body, text_facets) VALUES (new.${rowid}, new.text_body, new.text_facets);
    END;
    CREATE TRIGGER "${t}_text_delete" AFTER DELETE ON "${t}" BEGIN
      INSERT INTO "${fts}" ("${fts}", rowid, text_body, text_facets) VALUES ('delete', old.${rowid}, old.text_body, old.text_facets);
    END;
    CREATE TRIGGER "${t}_text_update" AFTER UPDATE ON "${t}" BEGIN
      INSERT INTO "${fts}" ("${fts}", rowid, text_body, text_facets) VALUES ('delete', old.${rowid}, old.text_body, old.text_facets);
      INSERT INTO "${fts}" (rowid, text_body, text_facets) VALUES (new.${rowid}, new.text_body, new.text_facets);
    END;
  `);
}

/**
 * A text collection's declared columns, its order the rowid; it must declare its text, facets and
 * order. Facets made of other fields (`facetsFrom`) are made by SQLite (a generated column, not
 * stored): the row keeps only the fields they are made of.
 */
function textColumns(collection: string, spec: TextIndexSpec, columns: NonNullable<CollectionSpec['columns']>): string[] {
  const declared = layoutColumns(columns);
  for (const name of [spec.field, spec.facets, spec.order, ...(spec.facetsFrom ?? []).flatMap((s) => ('fields' in s ? s.fields : [s.when]))]) {
    if (!declared.some((c) => c.name === name)) throw new Error(`The text collection ${collection} keeps no column for its field ${name}`);
  }
  return declared.map((c) => {
    if (c.name === spec.order) return `${column(c.name)} INTEGER PRIMARY KEY`;
    if (c.name === spec.facets && spec.facetsFrom) return `${column(c.name)} ${SQL_TYPES.words} GENERATED ALWAYS AS (${facetsSql(spec.facetsFrom)}) VIRTUAL`;
    return columnDefinition(c);
  });
}

const FACET_WORD = /^[A-Za-z0-9]+$/;

/** The facets made of a row's fields, in SQL: `FacetSource`'s tokens separated by spaces. */
export function facetsSql(sources: readonly FacetSource[]): string {
  const tokens = sources.map((source) => {
    if ('fields' in source) {
      if (!FACET_WORD.test(source.prefix)) throw new Error(`Invalid facet prefix: ${source.prefix}`);
      return `' ${source.prefix}' || lower(hex(${source.fields.map(column).join(' || char(0) || ')}))`;
    }
    if (!FACET_WORD.test(source.token)) throw new Error(`Invalid facet token: ${source.token}`);
    return `(CASE WHEN ${column(source.when)} THEN ' ${source.token}' ELSE '' END)`;
  });
  // Each token after a space, the first space left out.
  return `substr(${tokens.join(' || ')}, 2)`;
}

/** The column a text collection's rows are ordered by, and its index refers to (the rowid). */
const rowidColumn = (layout: CollectionLayout, spec: TextIndexSpec): string => (layout.documents ? 'seq' : layout.fieldOf(spec.order));

/**
 * A put into a text collection: as every put (a later position replaces), with the document's
 * `order` as its rowid, which a replacement leaves as it is.
 */
export const textPutSql = (collection: string, spec: TextIndexSpec, layout: CollectionLayout): string => {
  const t = table(collection);
  if (!layout.documents) {
    return laterPositionPutSql(t, [...layout.written, 'position'], [rowidColumn(layout, spec)], layout.keyColumns);
  }
  const order = field(spec.order).replace('json_extract(doc,', 'json_extract(d,');
  // (`WHERE true`: an upsert after a SELECT needs a WHERE, or its ON reads as a join's.)
  return `INSERT INTO "${t}" (seq, id, doc, position)
          SELECT ${order}, i, d, p FROM (SELECT ? AS i, ? AS d, ? AS p) WHERE true
          ON CONFLICT(id) DO UPDATE SET doc = excluded.doc, position = excluded.position
          WHERE excluded.position > "${t}".position`;
};

/** A word or facet as an FTS5 string (a quoted string is never an operator). */
const quoted = (token: string): string => `"${token.replace(/"/g, '""')}"`;

/**
 * The FTS5 query of a search: every phrase in the text (its words in a row), and one facet of
 * each group. Empty phrases and groups are refused by the caller; an empty list means no
 * condition on that column.
 */
export function matchExpression(search: Pick<TextSearch, 'phrases' | 'facets'>): string {
  const terms: string[] = [];
  for (const phrase of search.phrases) terms.push(`text_body : (${phrase.map(quoted).join(' + ')})`);
  for (const group of search.facets) terms.push(`text_facets : (${group.map(quoted).join(' OR ')})`);
  return terms.join(' AND ');
}

type Prepare = (sql: string) => Database.Statement;

/**
 * The matches of a search as one statement, newest first: FTS5 walks its matches by rowid,
 * descending (a page of `newest` reads about as many index entries as it answers), and the
 * table's row of each checks `where`. For `newest` it answers the page's documents; for
 * `relevance` the newest `window` matches' texts, which `rankedPage` scores.
 */
export function searchTextSql(collection: string, search: TextSearch, layout: CollectionLayout = JSON_LAYOUT): { sql: string; params: unknown[] } {
  const t = table(collection);
  const fts = textTable(collection);
  const rowid = rowidColumn(layout, search.index);
  const { clauses, params } = whereClause(search.where, layout.fieldOf);
  const relevance = search.order === 'relevance';
  const conditions = [`"${fts}" MATCH ?`, ...clauses];
  const bound: unknown[] = [matchExpression(search), ...params];
  if (search.after && !relevance) {
    conditions.push(`"${fts}".rowid < ?`);
    bound.push(search.after.order);
  }
  bound.push(relevance ? search.window : search.limit);
  const selected = layout.selected.split(', ').map((c) => `r.${c}`).join(', ');
  const sql = `SELECT ${relevance ? 'r.text_body AS body' : selected}, "${fts}".rowid AS ord
     FROM "${fts}" JOIN "${t}" r ON r.${rowid} = "${fts}".rowid
     WHERE ${conditions.join(' AND ')}
     ORDER BY "${fts}".rowid DESC LIMIT CAST(? AS INTEGER)`;
  return { sql, params: bound };
}

/** BM25's term-frequency saturation and length normalisation (the usual constants). */
const K1 = 1.2;
const B = 0.75;

/**
 * How well a text matches the phrases: BM25's weighting of how often each phrase occurs in it,
 * for its length against the window's average, every phrase weighing the same. (SQLite's own
 * `bm25()` weighs each phrase by its rarity, which it counts over the whole index on every
 * query: a common word of a long history, or a facet every document holds, would cost a walk
 * of its whole doclist. Every match holds every phrase, so rarity changes little here.)
 */
export function relevanceScore(words: readonly string[], phrases: readonly (readonly string[])[], averageLength: number): number {
  let score = 0;
  const norm = K1 * (1 - B + (B * words.length) / Math.max(averageLength, 1));
  for (const phrase of phrases) {
    let tf = 0;
    for (let i = 0; i + phrase.length <= words.length; i++) if (phrase.every((w, k) => words[i + k] === w)) tf++;
    score += (tf * (K1 + 1)) / (tf + norm);
  }
  return score;
}

/** The documents a search finds: `newest` in one statement, `relevance` as the window's matches ranked, then the page's documents read. */
export function searchTextCollection<D extends Document>(prepare: Prepare, collection: string, search: TextSearch, layout: CollectionLayout): TextMatch<D>[] {
  const { sql, params } = searchTextSql(collection, search, layout);
  if (search.order !== 'relevance') {
    const rows = prepare(sql).all(...params) as (Record<string, unknown> & { ord: number })[];
    return rows.map((r) => ({ document: layout.document(r) as D, order: r.ord, score: 0 }));
  }
  const window = (prepare(sql).all(...params) as { body: string | null; ord: number }[]).map((r) => ({ words: (r.body ?? '').split(' '), ord: r.ord }));
  const averageLength = window.reduce((sum, m) => sum + m.words.length, 0) / Math.max(window.length, 1);
  // The phrases as the index compares them: folded again (the text was folded before it was stored).
  const phrases = search.phrases.map((phrase) => phrase.map((w) => w.toLowerCase()));
  const after = search.after;
  const page = window
    .map((m) => ({ ord: m.ord, score: relevanceScore(m.words, phrases, averageLength) }))
    .filter((m) => !after || m.score < (after.score ?? 0) || (m.score === after.score && m.ord < after.order))
    .sort((a, b) => b.score - a.score || b.ord - a.ord)
    .slice(0, search.limit);
  if (page.length === 0) return [];
  const rowid = rowidColumn(layout, search.index);
  const rows = prepare(`SELECT ${rowid} AS ord, ${layout.selected} FROM "${table(collection)}" WHERE ${rowid} IN (SELECT value FROM json_each(?))`).all(
    JSON.stringify(page.map((m) => m.ord)),
  ) as (Record<string, unknown> & { ord: number })[];
  const byOrder = new Map(rows.map((r) => [r.ord, r]));
  return page.flatMap((m) => {
    const row = byOrder.get(m.ord);
    return row === undefined ? [] : [{ document: layout.document(row) as D, order: m.ord, score: m.score }];
  });
}

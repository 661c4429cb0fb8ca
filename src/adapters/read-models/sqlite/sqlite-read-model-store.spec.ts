import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LogPosition } from '../../../shared/domain/event';
import { CollectionSpec, DocumentChange, ReadModelWriteError } from '../../../shared/ports/read-model-store.port';
import { documentId } from '../../../shared/domain/streams';
import { IN_MEMORY, SqliteReadModelStore } from './sqlite-read-model-store';
import { asRoot, mountTmpfs } from '../../../../test/support/volumes';

/**
 * A full disk while running, on real storage: a small tmpfs filled up with a file when the
 * test runs as root, otherwise SQLite's page limit (which fails the same way, SQLITE_FULL).
 */
interface FullDisk {
  readonly means: string;
  readonly file: string;
  open(): SqliteReadModelStore;
  /** Leaves only a little room (called once the store exists). */
  fill(): void;
  free(): void | Promise<void>;
  cleanup(): void;
}

const KiB = 1024;

function tmpfsDisk(): FullDisk {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rm-full-'));
  mountTmpfs(dir, '2m');
  const filler = join(dir, 'filler');
  return {
    means: 'a 2 MiB tmpfs filled with a file',
    file: join(dir, 'read-models.sqlite'),
    open() {
      return new SqliteReadModelStore(this.file);
    },
    fill() {
      const fd = openSync(filler, 'w');
      const chunk = Buffer.alloc(64 * KiB, 1);
      let size = 0;
      try {
        for (;;) size += writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      }
      ftruncateSync(fd, Math.max(0, size - 256 * KiB));
      closeSync(fd);
    },
    free() {
      unlinkSync(filler);
    },
    cleanup() {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pageLimitedDisk(): FullDisk {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rm-full-'));
  let store: SqliteReadModelStore | null = null;
  return {
    means: "SQLite's page limit (max_page_count)",
    file: join(dir, 'read-models.sqlite'),
    open() {
      return (store = new SqliteReadModelStore(this.file, { maxPageCount: 128 }));
    },
    fill() {
      // The limit is the filling.
    },
    async free() {
      // Frees pages inside the file for SQLite to reuse: what deleting old data does.
      await store!.applyBatch([{ collection: 'filler', kind: 'delete', id: 'filler' }], {});
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const pos = (i: number): LogPosition => String(i).padStart(20, '0');
const pad = 'x'.repeat(8 * KiB);

describe('SqliteReadModelStore on a full disk', () => {
  const disk = asRoot ? tmpfsDisk() : pageLimitedDisk();
  afterAll(() => disk.cleanup());

  it(`rejects the batch that does not fit, keeps what was stored, and writes again once space is freed (${disk.means})`, async () => {
    const store = disk.open();
    await store.ensureCollections([{ name: 'docs', indexes: [{ fields: ['n'] }] }, { name: 'filler' }]);
    // Room to free later under the page limit (unused on tmpfs, where the filler is a file).
    await store.applyBatch([{ collection: 'filler', kind: 'put', document: { _id: 'filler', pad: 'f'.repeat(160 * KiB) }, position: pos(0) }], {});
    await store.applyBatch([{ collection: 'docs', kind: 'put', document: { _id: 'd0', n: 0, pad }, position: pos(0) }], { docs_v1: pos(0) });
    disk.fill();
    const batch = (i: number) =>
      [[{ collection: 'docs', kind: 'put' as const, document: { _id: `d${i}`, n: i, pad }, position: pos(i) }], { docs_v1: pos(i) }] as const;

    // Write until the disk is full: the failing call rejects, it never throws synchronously.
    let stored = 0;
    let failure: unknown = null;
    for (let i = 1; i <= 2_000 && !failure; i++) {
      let write!: Promise<void>;
      expect(() => (write = store.applyBatch(...batch(i)))).not.toThrow();
      failure = await write.then(
        () => null,
        (error: unknown) => error,
      );
      if (!failure) stored = i;
    }
    expect(stored).toBeGreaterThan(0);
    expect(failure).toBeInstanceOf(ReadModelWriteError);
    expect(String(((failure as Error).cause as { code?: string }).code)).toMatch(/^SQLITE_(FULL|IOERR)/);

    // Nothing of the failed batch, everything before it; reads and later attempts still answer.
    const failed = stored + 1;
    expect(await store.get('docs', `d${failed}`)).toBeNull();
    expect(await store.getCheckpoint('docs_v1')).toBe(pos(stored));
    expect(await store.count('docs')).toBe(stored + 1);
    await expect(store.applyBatch(...batch(failed))).rejects.toBeInstanceOf(ReadModelWriteError);
    expect(await store.getCheckpoint('docs_v1')).toBe(pos(stored));

    await disk.free();
    // The same connection writes again, with no restart.
    await store.applyBatch(...batch(failed));
    await store.applyBatch(...batch(failed + 1));
    expect(await store.get('docs', `d${failed}`)).toEqual({ _id: `d${failed}`, n: failed, pad });
    expect(await store.getCheckpoint('docs_v1')).toBe(pos(failed + 1));
    await store.close();

    // And all of it is on disk.
    const reopened = disk.open();
    expect(await reopened.count('docs')).toBe(failed + 2);
    expect(await reopened.getCheckpoint('docs_v1')).toBe(pos(failed + 1));
    await reopened.close();
  });
});

describe('SqliteReadModelStore deferred indexes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rm-deferred-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const indexesOf = (file: string, table: string): string[] => {
    // A second connection reads the schema as another process would.
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name`).all(table) as { name: string }[]).map((r) => r.name);
    } finally {
      db.close();
    }
  };

  it('a new collection gets its unique indexes at once and the others when built; a crash before that leaves them deferred', async () => {
    const file = join(dir, 'read-models.sqlite');
    const spec = { name: 'docs', indexes: [{ fields: ['n'] }, { fields: ['code'], unique: true }] };
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([spec]);
    await store.applyBatch([{ collection: 'docs', kind: 'put', document: { _id: 'a', n: 1, code: 'x' }, position: pos(1) }], {});
    expect(indexesOf(file, 'rm_docs')).toEqual(['ix_docs_code']);
    await store.close(); // as if the process died mid-build

    const reopened = new SqliteReadModelStore(file);
    await reopened.ensureCollections([spec]);
    expect(indexesOf(file, 'rm_docs')).toEqual(['ix_docs_code']);
    // A query builds them first; the end of a catch-up does the same through buildDeferredIndexes.
    expect(await reopened.find('docs', { where: { n: 1 } })).toEqual([{ _id: 'a', n: 1, code: 'x' }]);
    expect(indexesOf(file, 'rm_docs')).toEqual(['ix_docs_code', 'ix_docs_n']);
    await reopened.buildDeferredIndexes(['docs']);
    await reopened.close();

    const again = new SqliteReadModelStore(file);
    await again.ensureCollections([spec]); // an existing collection's indexes are not deferred again
    expect(indexesOf(file, 'rm_docs')).toEqual(['ix_docs_code', 'ix_docs_n']);
    await again.reset(['docs'], []);
    await again.ensureCollections([spec]); // emptied by a rebuild: deferred again
    expect(indexesOf(file, 'rm_docs')).toEqual(['ix_docs_code']);
    await again.buildDeferredIndexes(['docs']);
    expect(indexesOf(file, 'rm_docs')).toEqual(['ix_docs_code', 'ix_docs_n']);
    await again.close();
  });
});

describe('SqliteReadModelStore in memory', () => {
  it('holds documents and checkpoints while open, in no file, and is gone once closed', async () => {
    const store = new SqliteReadModelStore(IN_MEMORY);
    await store.ensureCollections([{ name: 'docs', indexes: [{ fields: ['n'] }] }]);
    await store.applyBatch([{ collection: 'docs', kind: 'put', document: { _id: 'a', n: 1 }, position: pos(1) }], { docs_v1: pos(1) });
    expect(await store.find('docs', { where: { n: 1 } })).toEqual([{ _id: 'a', n: 1 }]);
    expect(await store.getCheckpoint('docs_v1')).toBe(pos(1));
    await store.close();
    expect(existsSync(IN_MEMORY)).toBe(false);

    const another = new SqliteReadModelStore(IN_MEMORY);
    expect(await another.getCheckpoint('docs_v1')).toBeNull();
    await another.close();
  });
});

describe('SqliteReadModelStore collections kept in columns', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rm-columns-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const spec: CollectionSpec = {
    name: 'lines',
    indexes: [{ fields: ['key', 'position'] }],
    columns: ['key', 'position', 'revision', { name: 'flag', type: 'boolean' }, { name: 'parts', type: 'json' }],
  };

  it('holds each field in a column of its own, with no JSON, and indexes the columns themselves', async () => {
    const file = join(dir, 'plain.sqlite');
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([spec]);
    await store.applyBatch(
      [{ collection: 'lines', kind: 'put', document: { _id: 'a', key: 'user:ann', position: pos(5), revision: 3, flag: true, parts: [{ type: 'text/plain' }] }, position: pos(5) }],
      {},
    );
    await store.buildDeferredIndexes(['lines']);
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT * FROM rm_lines').all()).toEqual([
        { id: 'a', f_key: 'user:ann', f_position: pos(5), f_revision: 3, f_flag: 1, f_parts: '[{"type":"text/plain"}]', position: 5 },
      ]);
      // Whole numbers and booleans as SQLite integers (1 and 0 take no bytes), not 8-byte REALs.
      expect(db.prepare('SELECT typeof(f_revision) AS revision, typeof(f_flag) AS flag FROM rm_lines').get()).toEqual({ revision: 'integer', flag: 'integer' });
      const index = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'ix_lines_key_position'`).get() as { sql: string };
      expect(index.sql).toBe('CREATE INDEX "ix_lines_key_position" ON "rm_lines" ("f_key", "f_position")');
    } finally {
      db.close();
    }
  });

  it('keeps the log’s twenty-digit positions as integers in tables it makes, other positions as text, and an earlier release’s text positions as they are', async () => {
    const file = join(dir, 'positions.sqlite');
    const old = new Database(file);
    old.exec(`CREATE TABLE "rm_before" (id TEXT PRIMARY KEY, doc TEXT NOT NULL, position TEXT NOT NULL)`);
    old.close();
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([spec, { name: 'before' }, { name: 'documents' }]);
    const esdb = '00000000000000001234:00000000000000001200';
    const puts: DocumentChange[] = [
      { collection: 'lines', kind: 'put', document: { _id: 'a', key: 'k' }, position: pos(7) },
      { collection: 'documents', kind: 'put', document: { _id: 'a', n: 1 }, position: pos(8) },
      { collection: 'documents', kind: 'put', document: { _id: 'b', n: 1 }, position: esdb },
      { collection: 'before', kind: 'put', document: { _id: 'a', n: 1 }, position: pos(9) },
    ];
    await store.applyBatch(puts, {});
    // An older position changes nothing, a later one replaces, whatever the column holds.
    await store.applyBatch([{ ...puts[1], document: { _id: 'a', n: 0 }, position: pos(2) } as DocumentChange, { ...puts[3], document: { _id: 'a', n: 2 }, position: pos(10) } as DocumentChange], {});
    expect(await store.getStored('lines', 'a')).toEqual({ document: { _id: 'a', key: 'k' }, position: pos(7) });
    expect(await store.getStored('documents', 'a')).toEqual({ document: { _id: 'a', n: 1 }, position: pos(8) });
    expect(await store.getStored('documents', 'b')).toEqual({ document: { _id: 'b', n: 1 }, position: esdb });
    expect(await store.findStored('before')).toEqual([{ document: { _id: 'a', n: 2 }, position: pos(10) }]);
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      const stored = (t: string) => db.prepare(`SELECT id, typeof(position) AS type FROM "${t}" ORDER BY id`).all();
      expect(stored('rm_lines')).toEqual([{ id: 'a', type: 'integer' }]);
      expect(stored('rm_documents')).toEqual([{ id: 'a', type: 'integer' }, { id: 'b', type: 'text' }]);
      expect(stored('rm_before')).toEqual([{ id: 'a', type: 'text' }]);
    } finally {
      db.close();
    }
  });

  it('another connection that never declared the collection reads it the same, typed columns too (the table says its layout)', async () => {
    const file = join(dir, 'shared.sqlite');
    const writer = new SqliteReadModelStore(file);
    await writer.ensureCollections([spec]);
    const reader = new SqliteReadModelStore(file);
    const line = { _id: 'a', key: 'k', position: pos(1), revision: 0, flag: false, parts: [{ content: 'x' }] };
    await writer.applyBatch([{ collection: 'lines', kind: 'put', document: line, position: pos(1) }], {});
    expect(JSON.stringify(await reader.find('lines', { where: { key: 'k', flag: false } }))).toBe(JSON.stringify([line]));
    await writer.close();
    await reader.close();
  });

  it('keeps a JSON value of a usual shape shorter (a text part’s opening, an array of words), reading back the same as a value kept whole', async () => {
    const file = join(dir, 'json.sqlite');
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([spec]);
    const values = [
      [{ type: 'text/plain', content: 'hi "there"' }, { type: 'image/png', url: 'u' }],
      ['i62656e6368', 'r00', 'attachment'],
      ['two words', 'x'],
      [],
      ['東京', '1'],
      { type: 'text/plain', content: 'x' },
      '\u0001 a string',
    ];
    await store.applyBatch(values.map((parts, i) => ({ collection: 'lines', kind: 'put', document: { _id: `v${i}`, parts }, position: pos(1) })), {});
    await store.close();
    const db = new Database(file);
    try {
      const kept = db.prepare('SELECT id, f_parts AS parts FROM rm_lines ORDER BY id').all() as { id: string; parts: string }[];
      expect(kept.map((r) => r.parts)).toEqual([
        '\u0001"hi \\"there\\""},{"type":"image/png","url":"u"}]',
        '\u0010i62656e6368 r00 attachment',
        '["two words","x"]',
        '[]',
        '\u0010東京 1',
        '{"type":"text/plain","content":"x"}',
        '"\\u0001 a string"',
      ]);
      // As an earlier release kept them: whole.
      db.prepare('INSERT INTO rm_lines (id, f_parts, position) VALUES (?, ?, 1)').run('whole', JSON.stringify(values[0]));
    } finally {
      db.close();
    }
    const reader = new SqliteReadModelStore(file);
    for (const [i, parts] of values.entries()) expect(await reader.get('lines', `v${i}`)).toEqual({ _id: `v${i}`, parts });
    expect(await reader.get('lines', 'whole')).toEqual({ _id: 'whole', parts: values[0] });
    await reader.close();
  });

  it('refuses a document with a field outside its columns, or a value that is not a string or a number, and writes nothing of that batch', async () => {
    const store = new SqliteReadModelStore(IN_MEMORY);
    await store.ensureCollections([spec]);
    const write = (document: Record<string, unknown>) =>
      store.applyBatch(
        [
          { collection: 'lines', kind: 'put', document: { _id: 'ok', key: 'k' }, position: pos(1) },
          { collection: 'lines', kind: 'put', document: { _id: 'x', ...document }, position: pos(1) },
        ],
        { lines_v1: pos(1) },
      );
    await expect(write({ key: 'k', extra: 1 })).rejects.toThrow('Fields not among the collection\'s columns: extra');
    await expect(write({ key: true })).rejects.toThrow('The field key of a collection kept in columns holds a boolean, not a string or a number');
    await expect(write({ key: 'k', flag: 1 })).rejects.toThrow('The field flag of a collection kept in columns holds a number, not a boolean');
    await expect(write({ key: null })).rejects.toThrow('holds a null');
    await expect(write({ key: { nested: 1 } })).rejects.toThrow('holds a object');
    expect(await store.find('lines')).toEqual([]);
    expect(await store.getCheckpoint('lines_v1')).toBeNull();
    await expect(store.find('lines', { where: { extra: 1 } })).rejects.toThrow('Unknown field extra of a collection kept in columns (key, position, revision, flag, parts)');
    // A field set to undefined is absent, as JSON.stringify leaves it out of a document.
    await store.applyBatch([{ collection: 'lines', kind: 'put', document: { _id: 'u', key: 'k', flag: undefined, extra: undefined }, position: pos(1) }], {});
    expect(await store.get('lines', 'u')).toEqual({ _id: 'u', key: 'k' });
    await store.close();
  });
});

describe('SqliteReadModelStore collections keyed by their fields', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-rm-keyed-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const notes: CollectionSpec = {
    name: 'notes',
    indexes: [{ fields: ['room'] }, { fields: ['room', 'at'] }],
    columns: ['room', { name: 'n', type: 'integer' }, { name: 'at', type: 'time' }, 'text'],
    key: ['room', 'n'],
  };
  const note = (room: string, n: number, at: string, text = 'x') => ({ _id: documentId(room, String(n)), room, n, at, text });
  const put = (document: Record<string, unknown> & { _id: string }, at = 1): DocumentChange => ({ collection: 'notes', kind: 'put', document, position: pos(at) });

  it('keeps no id and no index of it: the rows are found by their key, and read back with the same _id, from a connection that never declared them too', async () => {
    const file = join(dir, 'keyed.sqlite');
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([notes]);
    const a = note('r1', 1, '2026-11-27T18:46:57.842Z');
    const b = note('r1', 2, '2026-11-27T18:46:58.000Z');
    const c = note('r 2', 1, '2026-11-27T18:47:00Z');
    await store.applyBatch([put(a), put(b), put(c)], {});
    await store.buildDeferredIndexes(['notes']);
    expect(await store.get('notes', a._id)).toEqual(a);
    expect(await store.getStored('notes', c._id)).toEqual({ document: c, position: pos(1) });
    expect((await store.getMany('notes', [c._id, 'not json', documentId('r1', '01'), documentId('r1'), a._id])).sort((x, y) => x._id.localeCompare(y._id))).toEqual([c, a].sort((x, y) => x._id.localeCompare(y._id)));
    expect(await store.find('notes', { where: { room: 'r1' }, sort: [{ field: 'n', descending: true }] })).toEqual([b, a]);
    // A later position replaces, an earlier one changes nothing; a removal by _id.
    await store.applyBatch([put({ ...a, text: 'later' }, 2), put({ ...b, text: 'earlier' }, 0)], {});
    await store.applyBatch([{ collection: 'notes', kind: 'delete', id: c._id }, { collection: 'notes', kind: 'delete', id: 'no such key' }], {});
    expect(await store.find('notes', { sort: [{ field: 'n' }] })).toEqual([{ ...a, text: 'later' }, b]);
    await expect(store.find('notes', { where: { _id: a._id } })).rejects.toThrow('queried by those fields, not by _id');
    const reader = new SqliteReadModelStore(file);
    expect(JSON.stringify(await reader.get('notes', b._id))).toBe(JSON.stringify(b));
    await reader.close();
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      const sql = (db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'rm_notes'`).get() as { sql: string }).sql;
      expect(sql).toContain('UNIQUE ("f_room", "f_n")');
      expect((db.prepare(`SELECT name FROM pragma_table_info('rm_notes')`).all() as { name: string }[]).map((c) => c.name)).not.toContain('id');
      // The key's own index answers for (room); (room, at) is an index of its own.
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_notes' AND sql IS NOT NULL`).all()).toEqual([{ name: 'ix_notes_room_at' }]);
    } finally {
      db.close();
    }
  });

  it('keeps toISOString’s times as milliseconds and any other as it is, reading back and comparing the same strings', async () => {
    const file = join(dir, 'times.sqlite');
    const store = new SqliteReadModelStore(file);
    await store.ensureCollections([notes]);
    const times = ['2026-11-27T18:46:57.842Z', '2026-11-27T18:46:57Z', '1969-12-31T23:59:59.999Z', '2026-11-27T18:46:57.843Z', '2026-11-27', '9999-12-31T23:59:59.999Z'];
    const written = times.map((at, n) => note('r', n, at));
    await store.applyBatch(written.map((d) => put(d)), {});
    expect(await store.find('notes', { sort: [{ field: 'n' }] })).toEqual(written);
    const byText = [...written].sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
    expect(await store.find('notes', { sort: [{ field: 'at' }] })).toEqual(byText);
    const range = { gte: '2026-11-27T18:46:57.842Z', lt: '2026-11-27T18:46:57Z' };
    expect(await store.find('notes', { where: { at: range }, sort: [{ field: 'n' }] })).toEqual(written.filter((d) => d.at >= range.gte && d.at < range.lt));
    expect(await store.count('notes', { at: '2026-11-27T18:46:57.843Z' })).toBe(1);
    await expect(store.applyBatch([put({ ...note('r', 9, ''), at: 5 })], {})).rejects.toThrow('holds a number, not a time');
    await expect(store.applyBatch([put({ ...note('r', 9, ''), n: 1.5, _id: documentId('r', '1.5') })], {})).rejects.toThrow('not a whole number');
    await expect(store.applyBatch([put({ ...note('r', 9, 'x'), _id: documentId('r', '10') })], {})).rejects.toThrow('is not keyed by its fields room, n');
    await expect(store.applyBatch([put({ ...note('r', 9, 'x'), room: 7, _id: documentId('7', '9') })], {})).rejects.toThrow('holds a number, not a string');
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT typeof(f_at) AS type FROM rm_notes ORDER BY f_n').all().map((r) => (r as { type: string }).type)).toEqual([
        'integer',
        'text',
        'text',
        'integer',
        'text',
        'integer',
      ]);
    } finally {
      db.close();
    }
  });

  it('a text collection keyed by its fields keeps its order as rowid, is unique by the key, and searches and removes as any', async () => {
    const store = new SqliteReadModelStore(IN_MEMORY);
    const index = { field: 'body', facets: 'facets', order: 'seq' };
    await store.ensureCollections([
      {
        name: 'found',
        indexes: [{ fields: ['room'] }],
        text: index,
        columns: ['room', { name: 'n', type: 'integer' }, 'seq', 'body', { name: 'facets', type: 'json' }],
        key: ['room', 'n'],
      },
    ]);
    const doc = (n: number, body: string) => ({ _id: documentId('r', String(n)), room: 'r', n, seq: 10 + n, body, facets: ['fr'] });
    const put = (document: ReturnType<typeof doc>, at: number): DocumentChange => ({ collection: 'found', kind: 'put', document, position: pos(at) });
    await store.applyBatch([put(doc(1, 'alpha beta'), 1), put(doc(2, 'beta'), 2)], {});
    await store.applyBatch([put(doc(1, 'gamma'), 3)], {});
    const search = (word: string, order: 'newest' | 'relevance' = 'newest') =>
      store.searchText('found', { index, phrases: [[word]], facets: [['fr']], order, window: 100, limit: 10 }).then((found) => found.map((m) => [m.document._id, m.order]));
    expect(await search('beta')).toEqual([[doc(2, '')._id, 12]]);
    expect(await search('gamma', 'relevance')).toEqual([[doc(1, '')._id, 11]]);
    expect(await search('alpha')).toEqual([]);
    await store.applyBatch([{ collection: 'found', kind: 'delete', id: doc(2, '')._id }], {});
    expect(await search('beta')).toEqual([]);
    expect(await store.find('found', { where: { room: 'r' } })).toEqual([doc(1, 'gamma')]);
    await store.close();
  });
});

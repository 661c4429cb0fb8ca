import { randomUUID } from 'node:crypto';
import { LogPosition } from '../../src/shared/domain/event';
import {
  CollectionSpec,
  Condition,
  Document,
  DocumentChange,
  LeaseFence,
  LeaseLostError,
  LogPointer,
  logPointerId,
  ReadModelStore,
  ReadModelWriteError,
  facetToken,
  TextIndexSpec,
  TextSearch,
} from '../../src/shared/ports/read-model-store.port';
import { documentId } from '../../src/shared/domain/streams';
import { sleep } from '../support/waiting';

/**
 * The behaviour every ReadModelStore adapter must share, bound per adapter by a one-line spec.
 * Collections, checkpoints and leases get random names per test, and each test resets what it
 * created, so the suite also runs against a shared server.
 */
export function readModelStoreContract(
  name: string,
  /** `clock`: what the store takes and fences leases by (ms since the epoch); the system clock when absent. */
  make: (options?: { clock?: () => number }) => Promise<{ store: ReadModelStore; cleanup(): Promise<void> }>,
): void {
  describe(`ReadModelStore contract: ${name}`, () => {
    let store: ReadModelStore;
    let cleanup: () => Promise<void>;
    let tag: string;
    let collections: string[];
    let checkpoints: string[];
    let leases: { name: string; owners: string[] }[];

    beforeEach(async () => {
      ({ store, cleanup } = await make());
      tag = randomUUID().replace(/-/g, '').slice(0, 12);
      collections = [];
      checkpoints = [];
      leases = [];
    });

    afterEach(async () => {
      try {
        await store.reset(collections, checkpoints);
        for (const lease of leases) for (const owner of lease.owners) await store.releaseLease(lease.name, owner);
      } finally {
        await cleanup();
      }
    });

    /** A fresh collection name (valid everywhere: lower case, digits, underscores). */
    const collection = (label: string): string => {
      const c = `ct_${tag}_${label}`;
      collections.push(c);
      return c;
    };
    const checkpoint = (label: string): string => {
      const c = `ct-${tag}-${label}`;
      checkpoints.push(c);
      return c;
    };
    const lease = (label: string, owners: string[]) => {
      const l = `ct-${tag}-lease-${label}`;
      leases.push({ name: l, owners });
      return l;
    };
    const pos = (i: number): LogPosition => String(i).padStart(20, '0');
    const put = (c: string, document: Document, position = pos(1)): DocumentChange => ({
      collection: c,
      kind: 'put',
      document,
      position,
    });
    const ids = (docs: readonly Document[]) => docs.map((d) => d._id);
    const sortedIds = (docs: readonly Document[]) => ids(docs).sort();

    /** A small fixture of messages across two rooms. */
    const messages = [
      { _id: 'm1', room: 'r1', seq: 1, author: 'alice', deleted: false, edited: null, at: '2026-01-01T00:00:01Z' },
      { _id: 'm2', room: 'r1', seq: 2, author: 'bob', deleted: true, at: '2026-01-01T00:00:02Z' },
      { _id: 'm3', room: 'r2', seq: 3, author: 'alice', deleted: false, edited: '2026-01-02T00:00:00Z', at: '2026-01-01T00:00:03Z' },
      { _id: 'm4', room: 'r2', seq: 4, author: 'carol', deleted: false, at: '2026-01-01T00:00:04Z' },
      { _id: 'm5', room: 'r1', seq: 5, author: 'alice', deleted: true, edited: null, at: '2026-01-01T00:00:05Z' },
      { _id: 'm6', room: 'r3', seq: 6, author: 'bob', deleted: false, at: '2026-01-01T00:00:06Z' },
    ];
    const withMessages = async (): Promise<string> => {
      const c = collection('messages');
      await store.ensureCollections([
        {
          name: c,
          indexes: [
            { fields: ['room', { field: 'seq', descending: true }] },
            { fields: ['author'] },
            { fields: ['deleted', 'at'] },
          ],
        },
      ]);
      await store.applyBatch(
        messages.map((m, i) => put(c, m, pos(i + 1))),
        {},
      );
      return c;
    };

    const textLayouts: [string, CollectionSpec['columns']][] = [
      ['as documents', undefined],
      ['kept in columns', ['seq', 'body', { name: 'facets', type: 'json' }, 'at']],
    ];
    describe.each(textLayouts)('text search, %s', (_layout, columns) => {
      const index: TextIndexSpec = { field: 'body', facets: 'facets', order: 'seq' };
      const notes = [
        { _id: 'n1', seq: 10, body: 'the quick brown fox', facets: ['ra', 'ua'], at: '2026-01-01T00:00:01Z' },
        { _id: 'n2', seq: 20, body: 'brown bread', facets: ['ra', 'ub'], at: '2026-01-01T00:00:02Z' },
        { _id: 'n3', seq: 30, body: 'quick quick quick', facets: ['rb', 'ua'], at: '2026-01-01T00:00:03Z' },
        { _id: 'n4', seq: 40, body: 'fox brown quick', facets: ['rb', 'ub', 'attachment'], at: '2026-01-01T00:00:04Z' },
        { _id: 'n5', seq: 50, body: '東 京 タ ワ ー', facets: ['rc', 'ua'], at: '2026-01-01T00:00:05Z' },
      ];
      const withNotes = async (): Promise<string> => {
        const c = collection('notes');
        await store.ensureCollections([{ name: c, indexes: [{ fields: ['at'] }], text: index, ...(columns && { columns }) }]);
        await store.applyBatch(
          notes.map((n, i) => put(c, n, pos(i + 1))),
          {},
        );
        return c;
      };
      const search = (c: string, phrases: string[][], rest: Partial<TextSearch> = {}) =>
        store.searchText(c, { index, phrases, facets: [], order: 'newest', window: 100, limit: 10, ...rest });
      const found = async (c: string, phrases: string[][], rest: Partial<TextSearch> = {}) => (await search(c, phrases, rest)).map((m) => m.document._id);

      it('finds the documents holding every phrase, newest first, with their order', async () => {
        const c = await withNotes();
        expect(await found(c, [['quick']])).toEqual(['n4', 'n3', 'n1']);
        expect(await found(c, [['brown'], ['quick']])).toEqual(['n4', 'n1']);
        expect(await found(c, [['quick', 'brown']])).toEqual(['n1']);
        expect(await found(c, [['京', 'タ']])).toEqual(['n5']);
        expect(await found(c, [['absent']])).toEqual([]);
        expect((await search(c, [['bread']]))[0]).toEqual({ document: notes[1], order: 20, score: 0 });
      });

      it('requires one facet of each group and `where`, in the query: a limit counts only matching documents', async () => {
        const c = await withNotes();
        expect(await found(c, [['brown']], { facets: [['ra']] })).toEqual(['n2', 'n1']);
        expect(await found(c, [['brown']], { facets: [['ra', 'rb'], ['ua']] })).toEqual(['n1']);
        expect(await found(c, [['brown']], { facets: [['attachment']] })).toEqual(['n4']);
        expect(await found(c, [['brown']], { facets: [['ra']], limit: 1 })).toEqual(['n2']);
        expect(await found(c, [['brown']], { where: { at: { lt: '2026-01-01T00:00:03Z' } }, limit: 1 })).toEqual(['n2']);
      });

      it('pages newest first after an order, and by relevance after a score and an order', async () => {
        const c = await withNotes();
        expect(await found(c, [['quick']], { after: { order: 40 } })).toEqual(['n3', 'n1']);
        const ranked = await search(c, [['quick']], { order: 'relevance' });
        expect(ranked.map((m) => m.document._id).sort()).toEqual(['n1', 'n3', 'n4']);
        expect(ranked[0].document._id).toBe('n3');
        for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1].score).toBeGreaterThanOrEqual(ranked[i].score);
        const first = ranked[0];
        expect(await found(c, [['quick']], { order: 'relevance', after: { order: first.order, score: first.score } })).toEqual(ranked.slice(1).map((m) => m.document._id));
        // The window: only the newest matches are ranked.
        expect((await found(c, [['quick']], { order: 'relevance', window: 2 })).sort()).toEqual(['n3', 'n4']);
      });

      it('follows puts and deletes: a replaced text is found by its new words only, a removed document not at all', async () => {
        const c = await withNotes();
        await store.applyBatch([put(c, { ...notes[0], body: 'slow green turtle' }, pos(10)), { collection: c, kind: 'delete', id: 'n3' }], {});
        expect(await found(c, [['quick']])).toEqual(['n4']);
        expect(await found(c, [['turtle']])).toEqual(['n1']);
        // An older put changes nothing, as for every collection.
        await store.applyBatch([put(c, notes[0], pos(9))], {});
        expect(await found(c, [['fox']])).toEqual(['n4']);
        expect(await store.get(c, 'n1')).toEqual({ ...notes[0], body: 'slow green turtle' });
        expect(await found(c, [['brown']], { where: { at: { gte: '2026-01-01T00:00:02Z' } } })).toEqual(['n4', 'n2']);
      });
    });

    it('text search of a collection keyed by its fields, whose facets are made of its fields (facetsFrom): read back, found by and removed with them', async () => {
      const c = collection('made');
      const index: TextIndexSpec = {
        field: 'body',
        facets: 'facets',
        order: 'seq',
        facetsFrom: [
          { prefix: 'r', fields: ['room'] },
          { prefix: 'u', fields: ['room', 'user'] },
          { token: 'attachment', when: 'attached' },
        ],
      };
      await store.ensureCollections([
        {
          name: c,
          text: index,
          columns: ['room', { name: 'n', type: 'integer' }, 'user', 'seq', 'body', { name: 'facets', type: 'json' }, { name: 'attached', type: 'boolean' }],
          key: ['room', 'n'],
        },
      ]);
      const note = (room: string, n: number, user: string, body: string, attached: boolean) => ({
        _id: documentId(room, String(n)),
        room,
        n,
        user,
        seq: n * 10,
        body,
        facets: [facetToken('r', room), facetToken('u', room, user), ...(attached ? ['attachment'] : [])],
        attached,
      });
      const notes = [note('a', 1, 'ann', 'quick fox', true), note('a', 2, 'bob', 'quick bread', false), note('b 東', 3, 'ann', 'quick', false)];
      await store.applyBatch(notes.map((n, i) => put(c, n, pos(i + 1))), {});
      for (const n of notes) expect(await store.get(c, n._id)).toEqual(n);
      const found = async (facets: string[][]) =>
        (await store.searchText(c, { index, phrases: [['quick']], facets, order: 'newest', window: 100, limit: 10 })).map((m) => m.document._id);
      expect(await found([[facetToken('r', 'a')]])).toEqual([notes[1]._id, notes[0]._id]);
      expect(await found([[facetToken('r', 'b 東')], [facetToken('u', 'b 東', 'ann')]])).toEqual([notes[2]._id]);
      expect(await found([['attachment']])).toEqual([notes[0]._id]);
      await store.applyBatch([put(c, { ...notes[0], attached: false, facets: notes[0].facets.slice(0, 2) }, pos(9)), { collection: c, kind: 'delete', id: notes[1]._id }], {});
      expect(await found([['attachment']])).toEqual([]);
      expect(await found([[facetToken('r', 'a')]])).toEqual([notes[0]._id]);
    });

    describe('collections and indexes', () => {
      it('ensureCollections is idempotent and keeps existing documents', async () => {
        const c = collection('idem');
        const spec: CollectionSpec = { name: c, indexes: [{ fields: ['a'] }, { fields: ['b', { field: 'c', descending: true }], unique: true }] };
        await store.ensureCollections([spec]);
        await store.applyBatch([put(c, { _id: 'x', a: 1, b: 'b', c: 1 })], {});
        await store.ensureCollections([spec]);
        await store.ensureCollections([spec, { name: collection('second') }]);
        expect(await store.get(c, 'x')).toEqual({ _id: 'x', a: 1, b: 'b', c: 1 });
      });

      it('a collection declared with columns reads back each document field for field, in its order, and answers the same queries', async () => {
        const c = collection('columns');
        await store.ensureCollections([
          { name: c, indexes: [{ fields: ['key', 'position'] }], columns: ['instance_id', 'key', 'position', 'revision', 'note'] },
        ]);
        const lines = [
          { _id: 'a', instance_id: 'i', key: 'user:ann', position: pos(3), revision: 0, note: 'x' },
          { _id: 'b', instance_id: 'i', key: 'user:bob', position: pos(2), revision: 7 },
          { _id: 'c', instance_id: 'i', key: 'user:ann', position: pos(1), revision: 2.5, note: "it's \"quoted\"" },
        ];
        await store.applyBatch(lines.map((l, i) => put(c, l, pos(i + 1))), {});
        await store.buildDeferredIndexes([c]);
        expect(JSON.stringify(await store.get(c, 'b'))).toBe(JSON.stringify(lines[1]));
        expect(await store.getStored(c, 'c')).toEqual({ document: lines[2], position: pos(3) });
        expect(ids(await store.getMany(c, ['c', 'zz', 'a'])).sort()).toEqual(['a', 'c']);
        const ann = await store.find(c, { where: { key: 'user:ann', position: { gt: pos(0) } }, sort: [{ field: 'position' }] });
        expect(ann.map((d) => JSON.stringify(d))).toEqual([JSON.stringify(lines[2]), JSON.stringify(lines[0])]);
        expect(await store.count(c, { key: 'user:ann' })).toBe(2);
        expect(ids(await store.find(c, { where: { note: null } }))).toEqual(['b']);
        expect(ids(await store.find(c, { where: { _id: { in: ['a', 'b'] } }, sort: [{ field: 'revision', descending: true }] }))).toEqual(['b', 'a']);
        // A later position replaces the whole document; an older one changes nothing.
        await store.applyBatch([put(c, { _id: 'a', instance_id: 'i', key: 'user:ann', position: pos(9), revision: 1 }, pos(9)), put(c, lines[1], pos(1))], {});
        expect(await store.get(c, 'a')).toEqual({ _id: 'a', instance_id: 'i', key: 'user:ann', position: pos(9), revision: 1 });
        expect(await store.getStored(c, 'b')).toEqual({ document: lines[1], position: pos(2) });
        await store.applyBatch([{ collection: c, kind: 'delete', id: 'a' }], {});
        expect(await store.get(c, 'a')).toBeNull();
      });

      it('a collection of log pointers reads back each pointer field for field, and answers queries by instance, key, position and type', async () => {
        const c = collection('pointers');
        await store.ensureCollections([{ name: c, indexes: [{ fields: ['instance_id', 'key', 'position'] }], logPointers: true }]);
        await store.ensureCollections([{ name: c, indexes: [{ fields: ['instance_id', 'key', 'position'] }], logPointers: true }]);
        const pointer = (instance_id: string, key: string, at: number, stream: string, revision: number, type: string): LogPointer => ({
          _id: logPointerId(instance_id, key, pos(at)),
          instance_id,
          key,
          position: pos(at),
          stream,
          revision,
          type,
        });
        const lines = [
          pointer('i', 'user:ann', 1, 'messages-i.r1', 0, 'MessageSent'),
          pointer('i', 'key:k', 1, 'messages-i.r1', 0, 'MessageSent'),
          pointer('j', 'user:ann', 2, 'messages-j.r1', 0, 'MessageSent'),
          pointer('i', 'user:ann', 3, 'message-i.1', 0, 'MessageEdited'),
          pointer('i', 'room:r1', 3, 'message-i.1', 0, 'MessageEdited'),
          pointer('i', 'user:ann', 1_000_000, 'messages-i.r1', 123_456, 'MessageSent'),
        ];
        await store.applyBatch(lines.map((l) => put(c, l, l.position)), {});
        for (const line of lines) expect(JSON.stringify(await store.get(c, line._id))).toBe(JSON.stringify(line));
        expect(await store.getStored(c, lines[3]._id)).toEqual({ document: lines[3], position: pos(3) });
        expect(await store.get(c, logPointerId('j', 'key:k', pos(1)))).toBeNull();
        expect(ids(await store.getMany(c, [lines[4]._id, 'zz', lines[0]._id])).sort()).toEqual([lines[4]._id, lines[0]._id].sort());
        const ann = (query: { from?: number; type?: Condition; limit?: number }) =>
          store.find(c, {
            where: { instance_id: 'i', key: 'user:ann', ...(query.from !== undefined && { position: { gt: pos(query.from) } }), ...(query.type !== undefined && { type: query.type }) },
            sort: [{ field: 'position' }],
            limit: query.limit,
          });
        expect(await ann({})).toEqual([lines[0], lines[3], lines[5]]);
        expect(await ann({ from: 1, limit: 1 })).toEqual([lines[3]]);
        expect(await ann({ type: 'MessageEdited' })).toEqual([lines[3]]);
        expect(await ann({ type: { in: ['MessageSent', 'Other'] }, from: 1 })).toEqual([lines[5]]);
        expect(await store.find(c, { where: { key: 'user:ann' }, sort: [{ field: 'position', descending: true }] })).toEqual([lines[5], lines[3], lines[2], lines[0]]);
        expect(await store.count(c, { instance_id: 'i' })).toBe(5);
        // A redelivered line changes nothing; a delete removes the line alone.
        await store.applyBatch([put(c, { ...lines[0], revision: 9 }, lines[0].position), { collection: c, kind: 'delete', id: lines[1]._id }], {});
        expect(await store.get(c, lines[0]._id)).toEqual(lines[0]);
        expect(await store.get(c, lines[1]._id)).toBeNull();
        expect(await store.count(c)).toBe(5);
      });

      it('a collection kept in columns with typed columns reads back booleans and JSON values field for field, and answers queries on booleans', async () => {
        const c = collection('typed');
        await store.ensureCollections([
          {
            name: c,
            indexes: [{ fields: ['room', 'visible', 'id'] }],
            columns: ['room', 'id', { name: 'parts', type: 'json' }, { name: 'visible', type: 'boolean' }, 'deleted_at', { name: 'tombstone', type: 'boolean' }],
          },
        ]);
        const messages = [
          { _id: 'm1', room: 'r', id: 1, parts: [{ type: 'text/plain', content: 'hi "there"' }, { type: 'image/png', url: 'u', size: 3 }], visible: true },
          { _id: 'm2', room: 'r', id: 2, parts: [], visible: false, deleted_at: 't', tombstone: false },
          { _id: 'm3', room: 'r', id: 3, parts: { nested: [null, 1.5] }, visible: true, tombstone: true },
        ];
        await store.applyBatch(messages.map((m, i) => put(c, m, pos(i + 1))), {});
        await store.buildDeferredIndexes([c]);
        for (const m of messages) expect(JSON.stringify(await store.get(c, m._id))).toBe(JSON.stringify(m));
        expect(ids(await store.find(c, { where: { room: 'r', visible: true }, sort: [{ field: 'id', descending: true }] }))).toEqual(['m3', 'm1']);
        expect(ids(await store.find(c, { where: { visible: false } }))).toEqual(['m2']);
        expect(ids(await store.find(c, { where: { tombstone: null } }))).toEqual(['m1']);
      });

      it('a collection keyed by its fields finds, replaces and removes each document by its _id, reading back whole numbers and times field for field', async () => {
        const c = collection('keyed');
        await store.ensureCollections([
          {
            name: c,
            indexes: [{ fields: ['room'] }, { fields: ['room', 'at'] }],
            columns: ['room', { name: 'id', type: 'integer' }, { name: 'at', type: 'time' }, 'text'],
            key: ['room', 'id'],
          },
        ]);
        const message = (room: string, id: number, at: string, text: string) => ({ _id: documentId(room, String(id)), room, id, at, text });
        const messages = [
          message('r', 1, '2026-11-27T18:46:57.842Z', 'one'),
          message('r', 2, '2026-11-27T18:46:57Z', 'two'),
          message('r', 10, '2026-11-27T18:46:58.000Z', 'ten'),
          message('r "2"', 1, '1969-12-31T23:59:59.999Z', 'other room'),
        ];
        await store.applyBatch(messages.map((m, i) => put(c, m, pos(i + 1))), {});
        await store.buildDeferredIndexes([c]);
        for (const m of messages) expect(JSON.stringify(await store.get(c, m._id))).toBe(JSON.stringify(m));
        expect(await store.getStored(c, messages[1]._id)).toEqual({ document: messages[1], position: pos(2) });
        expect(ids(await store.getMany(c, [messages[3]._id, documentId('r', '01'), documentId('r', '3'), messages[0]._id])).sort()).toEqual([messages[0]._id, messages[3]._id].sort());
        expect(ids((await store.getStoredMany(c, [messages[2]._id, 'missing'])).map((s) => s.document))).toEqual([messages[2]._id]);
        expect(ids(await store.find(c, { where: { room: 'r' }, sort: [{ field: 'id', descending: true }] }))).toEqual([messages[2]._id, messages[1]._id, messages[0]._id]);
        // Times compare and sort as the strings they are.
        expect(ids(await store.find(c, { where: { at: { gte: '2026-11-27T18:46:57.842Z', lt: '2026-11-27T18:46:57Z' } } }))).toEqual([messages[0]._id]);
        expect(ids(await store.find(c, { sort: [{ field: 'at', descending: true }] }))).toEqual([messages[2]._id, messages[1]._id, messages[0]._id, messages[3]._id]);
        await store.applyBatch([put(c, { ...messages[0], text: 'edited' }, pos(9)), { collection: c, kind: 'delete', id: messages[2]._id }], {});
        expect(await store.get(c, messages[0]._id)).toEqual({ ...messages[0], text: 'edited' });
        expect(await store.get(c, messages[2]._id)).toBeNull();
        expect(await store.count(c, { room: 'r' })).toBe(2);
      });

      it('queries answer the same before and after buildDeferredIndexes, which is idempotent', async () => {
        const c = await withMessages();
        const query = { where: { room: 'r1' }, sort: [{ field: 'seq', descending: true }] };
        const before = await store.find(c, query);
        expect(ids(before)).toEqual(['m5', 'm2', 'm1']);
        await store.buildDeferredIndexes([c, collection('never_declared')]);
        await store.buildDeferredIndexes([c]);
        expect(await store.find(c, query)).toEqual(before);
        expect(await store.count(c, { author: 'bob' })).toBe(2);
      });

      it('a declared unique index rejects a duplicate, and the whole batch with it', async () => {
        const c = collection('unique');
        const cp = checkpoint('unique');
        await store.ensureCollections([{ name: c, indexes: [{ fields: ['email'], unique: true }] }]);
        await store.applyBatch([put(c, { _id: 'u1', email: 'a@x.io' })], { [cp]: pos(1) });
        await expect(
          store.applyBatch([put(c, { _id: 'u2', email: 'b@x.io' }), put(c, { _id: 'u3', email: 'a@x.io' })], { [cp]: pos(3) }),
        ).rejects.toBeInstanceOf(ReadModelWriteError);
        expect(await store.get(c, 'u2')).toBeNull();
        expect(await store.get(c, 'u3')).toBeNull();
        expect(await store.getCheckpoint(cp)).toBe(pos(1));
        // Replacing the holder of a value is no conflict; documents without the field never collide.
        await store.applyBatch([put(c, { _id: 'u1', email: 'a@x.io', name: 'A' }, pos(2))], {});
        expect(await store.get(c, 'u1')).toEqual({ _id: 'u1', email: 'a@x.io', name: 'A' });
        await store.applyBatch([put(c, { _id: 'n1', name: 'no email' }), put(c, { _id: 'n2', name: 'none either' })], {});
        expect(sortedIds(await store.find(c))).toEqual(['n1', 'n2', 'u1']);
      });

      it('a unique index never counts null as a value: explicit nulls and missing fields never collide, as in SQLite', async () => {
        const c = collection('unique_nulls');
        await store.ensureCollections([
          { name: c, indexes: [{ fields: ['email'], unique: true }, { fields: ['room', 'user'], unique: true }] },
        ]);
        await store.applyBatch(
          [
            put(c, { _id: 'a', email: null, room: 'r1', user: null }),
            put(c, { _id: 'b', email: null, room: 'r1', user: null }),
            put(c, { _id: 'c', room: null, user: null }),
            put(c, { _id: 'd', email: 'd@x.io', room: null, user: 'ann' }),
            put(c, { _id: 'e', email: 'e@x.io', room: null, user: 'ann' }),
          ],
          {},
        );
        expect(sortedIds(await store.find(c))).toEqual(['a', 'b', 'c', 'd', 'e']);
        expect(sortedIds(await store.find(c, { where: { email: null } }))).toEqual(['a', 'b', 'c']);
        // Values still collide.
        await expect(store.applyBatch([put(c, { _id: 'f', email: 'd@x.io' })], {})).rejects.toBeInstanceOf(ReadModelWriteError);
      });

      it('a compound unique index only rejects the same combination', async () => {
        const c = collection('members');
        await store.ensureCollections([{ name: c, indexes: [{ fields: ['room', 'user'], unique: true }] }]);
        await store.applyBatch(
          [
            put(c, { _id: '1', room: 'r1', user: 'alice' }),
            put(c, { _id: '2', room: 'r1', user: 'bob' }),
            put(c, { _id: '3', room: 'r2', user: 'alice' }),
          ],
          {},
        );
        await expect(store.applyBatch([put(c, { _id: '4', room: 'r2', user: 'alice' })], {})).rejects.toBeInstanceOf(ReadModelWriteError);
        expect(await store.find(c)).toHaveLength(3);
      });
    });

    describe('documents', () => {
      it('get and getStored return the document as given, with its position; a missing id is null', async () => {
        const c = collection('docs');
        await store.ensureCollections([{ name: c }]);
        const doc = {
          _id: '["acme","room 1"]',
          name: 'Ünïcode ✓',
          count: 3,
          ratio: 0.5,
          flags: { a: true, b: false },
          list: [1, 'two', null, { three: 3 }],
          nothing: null,
          empty: {},
        };
        await store.applyBatch([put(c, doc, pos(42))], {});
        expect(await store.get(c, doc._id)).toEqual(doc);
        expect(await store.getStored(c, doc._id)).toEqual({ document: doc, position: pos(42) });
        expect(await store.get(c, 'missing')).toBeNull();
        expect(await store.getStored(c, 'missing')).toBeNull();
      });

      it('a put replaces the whole document and its position; a delete removes it', async () => {
        const c = collection('replace');
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch([put(c, { _id: 'a', x: 1, y: 2 }, pos(1)), put(c, { _id: 'b', x: 1 }, pos(1))], {});
        await store.applyBatch([put(c, { _id: 'a', x: 5 }, pos(7))], {});
        expect(await store.getStored(c, 'a')).toEqual({ document: { _id: 'a', x: 5 }, position: pos(7) });
        await store.applyBatch([{ collection: c, kind: 'delete', id: 'a' }, { collection: c, kind: 'delete', id: 'never' }], {});
        expect(await store.get(c, 'a')).toBeNull();
        expect(await store.get(c, 'b')).toEqual({ _id: 'b', x: 1 });
      });

      it('changes to one document apply in batch order', async () => {
        const c = collection('order');
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch(
          [
            put(c, { _id: 'a', v: 1 }, pos(1)),
            { collection: c, kind: 'delete', id: 'a' },
            put(c, { _id: 'b', v: 1 }, pos(2)),
            put(c, { _id: 'b', v: 2 }, pos(3)),
            { collection: c, kind: 'delete', id: 'b' },
            put(c, { _id: 'b', v: 3 }, pos(4)),
          ],
          {},
        );
        expect(await store.get(c, 'a')).toBeNull();
        expect(await store.getStored(c, 'b')).toEqual({ document: { _id: 'b', v: 3 }, position: pos(4) });
      });

      it('getMany returns the documents that exist and skips the others', async () => {
        const c = await withMessages();
        expect(sortedIds(await store.getMany(c, ['m3', 'nope', 'm1']))).toEqual(['m1', 'm3']);
        expect(await store.getMany(c, [])).toEqual([]);
        expect(await store.getMany(c, ['nope'])).toEqual([]);
        const [one] = await store.getMany(c, ['m2']);
        expect(one).toEqual(messages[1]);
      });

      it('getStoredMany returns the documents that exist with their positions, and skips the others', async () => {
        const c = await withMessages();
        const found = await store.getStoredMany(c, ['m3', 'nope', 'm1', 'm3']);
        expect(found.sort((a, b) => a.document._id.localeCompare(b.document._id))).toEqual([
          { document: messages[0], position: pos(1) },
          { document: messages[2], position: pos(3) },
        ]);
        expect(await store.getStoredMany(c, [])).toEqual([]);
        expect(await store.getStoredMany(c, ['nope'])).toEqual([]);
        const many = Array.from({ length: 1500 }, (_, i) => `x${i}`);
        await store.applyBatch(many.map((id, i) => put(c, { _id: id, n: i }, pos(100 + i))), {});
        expect((await store.getStoredMany(c, many)).length).toBe(1500);
      });
    });

    describe('queries', () => {
      it('find without a query returns every document', async () => {
        const c = await withMessages();
        expect(sortedIds(await store.find(c))).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
        expect(sortedIds(await store.find(c, {}))).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
      });

      it('equality on strings and numbers, ANDed', async () => {
        const c = await withMessages();
        expect(sortedIds(await store.find(c, { where: { room: 'r1' } }))).toEqual(['m1', 'm2', 'm5']);
        expect(sortedIds(await store.find(c, { where: { room: 'r1', author: 'alice' } }))).toEqual(['m1', 'm5']);
        expect(sortedIds(await store.find(c, { where: { seq: 4 } }))).toEqual(['m4']);
        expect(sortedIds(await store.find(c, { where: { _id: 'm6' } }))).toEqual(['m6']);
        expect(await store.find(c, { where: { room: 'r9' } })).toEqual([]);
        expect(await store.find(c, { where: { room: 'r1', author: 'carol' } })).toEqual([]);
      });

      it('count counts the documents a where matches', async () => {
        const c = await withMessages();
        expect(await store.count(c)).toBe(6);
        expect(await store.count(c, { room: 'r1' })).toBe(3);
        expect(await store.count(c, { room: 'r1', seq: { gt: 1 } })).toBe(2);
        expect(await store.count(c, { room: 'r9' })).toBe(0);
      });

      it('equality on booleans', async () => {
        const c = await withMessages();
        expect(sortedIds(await store.find(c, { where: { deleted: true } }))).toEqual(['m2', 'm5']);
        expect(sortedIds(await store.find(c, { where: { deleted: false } }))).toEqual(['m1', 'm3', 'm4', 'm6']);
        expect(sortedIds(await store.find(c, { where: { deleted: false, room: 'r2' } }))).toEqual(['m3', 'm4']);
      });

      it('equality on null matches null and missing fields, not false or empty strings', async () => {
        const c = await withMessages();
        await store.applyBatch([put(c, { _id: 'z1', room: 'r4', edited: '' }), put(c, { _id: 'z2', room: 'r4', edited: false })], {});
        expect(sortedIds(await store.find(c, { where: { edited: null } }))).toEqual(['m1', 'm2', 'm4', 'm5', 'm6']);
        expect(sortedIds(await store.find(c, { where: { edited: null, author: 'alice' } }))).toEqual(['m1', 'm5']);
      });

      it('ranges on numbers and strings, open or closed, combined', async () => {
        const c = await withMessages();
        expect(sortedIds(await store.find(c, { where: { seq: { gt: 4 } } }))).toEqual(['m5', 'm6']);
        expect(sortedIds(await store.find(c, { where: { seq: { gte: 4 } } }))).toEqual(['m4', 'm5', 'm6']);
        expect(sortedIds(await store.find(c, { where: { seq: { lt: 2 } } }))).toEqual(['m1']);
        expect(sortedIds(await store.find(c, { where: { seq: { lte: 2 } } }))).toEqual(['m1', 'm2']);
        expect(sortedIds(await store.find(c, { where: { seq: { gt: 1, lte: 4 } } }))).toEqual(['m2', 'm3', 'm4']);
        expect(sortedIds(await store.find(c, { where: { seq: { gte: 2, lt: 5 }, room: 'r2' } }))).toEqual(['m3', 'm4']);
        expect(await store.find(c, { where: { seq: { gt: 6 } } })).toEqual([]);
        expect(sortedIds(await store.find(c, { where: { at: { gte: '2026-01-01T00:00:05Z' } } }))).toEqual(['m5', 'm6']);
        expect(sortedIds(await store.find(c, { where: { author: { gt: 'alice', lt: 'carol' } } }))).toEqual(['m2', 'm6']);
      });

      it('`in` matches any listed value; an empty list matches nothing; null in the list matches null and missing', async () => {
        const c = await withMessages();
        expect(sortedIds(await store.find(c, { where: { author: { in: ['bob', 'carol'] } } }))).toEqual(['m2', 'm4', 'm6']);
        expect(sortedIds(await store.find(c, { where: { seq: { in: [1, 3, 99] } } }))).toEqual(['m1', 'm3']);
        expect(sortedIds(await store.find(c, { where: { _id: { in: ['m2', 'm5'] } } }))).toEqual(['m2', 'm5']);
        expect(sortedIds(await store.find(c, { where: { deleted: { in: [true] } } }))).toEqual(['m2', 'm5']);
        expect(sortedIds(await store.find(c, { where: { room: { in: ['r1'] }, author: { in: ['alice'] } } }))).toEqual(['m1', 'm5']);
        expect(await store.find(c, { where: { author: { in: [] } } })).toEqual([]);
        expect(sortedIds(await store.find(c, { where: { edited: { in: [null, '2026-01-02T00:00:00Z'] } } }))).toEqual([
          'm1',
          'm2',
          'm3',
          'm4',
          'm5',
          'm6',
        ]);
        expect(sortedIds(await store.find(c, { where: { edited: { in: [null] }, room: 'r2' } }))).toEqual(['m4']);
      });

      it('sorts ascending and descending on several fields, then limits', async () => {
        const c = await withMessages();
        expect(ids(await store.find(c, { sort: [{ field: 'seq' }] }))).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
        expect(ids(await store.find(c, { sort: [{ field: 'seq', descending: true }] }))).toEqual(['m6', 'm5', 'm4', 'm3', 'm2', 'm1']);
        expect(ids(await store.find(c, { sort: [{ field: 'room' }, { field: 'seq', descending: true }] }))).toEqual([
          'm5',
          'm2',
          'm1',
          'm4',
          'm3',
          'm6',
        ]);
        expect(ids(await store.find(c, { sort: [{ field: 'author', descending: true }, { field: 'at' }] }))).toEqual([
          'm4',
          'm2',
          'm6',
          'm1',
          'm3',
          'm5',
        ]);
        expect(ids(await store.find(c, { sort: [{ field: 'deleted' }, { field: 'seq', descending: true }] }))).toEqual([
          'm6',
          'm4',
          'm3',
          'm1',
          'm5',
          'm2',
        ]);
        expect(ids(await store.find(c, { where: { room: 'r1' }, sort: [{ field: 'seq', descending: true }], limit: 2 }))).toEqual([
          'm5',
          'm2',
        ]);
        expect(ids(await store.find(c, { where: { seq: { gt: 2 } }, sort: [{ field: 'seq' }], limit: 1 }))).toEqual(['m3']);
        expect(await store.find(c, { limit: 4 })).toHaveLength(4);
        expect(await store.find(c, { sort: [{ field: 'seq' }], limit: 100 })).toHaveLength(6);
      });

      it('findStored returns documents with their positions', async () => {
        const c = await withMessages();
        const stored = await store.findStored(c, { where: { room: 'r2' }, sort: [{ field: 'seq' }] });
        expect(stored).toEqual([
          { document: messages[2], position: pos(3) },
          { document: messages[3], position: pos(4) },
        ]);
      });
    });

    describe('applyBatch and checkpoints', () => {
      it('moves several checkpoints with the changes; an unknown checkpoint is null', async () => {
        const c = collection('cp');
        const [a, b] = [checkpoint('a'), checkpoint('b')];
        await store.ensureCollections([{ name: c }]);
        expect(await store.getCheckpoint(a)).toBeNull();
        await store.applyBatch([put(c, { _id: 'x', v: 1 }, pos(5))], { [a]: pos(5), [b]: pos(5) });
        expect(await store.getCheckpoint(a)).toBe(pos(5));
        expect(await store.getCheckpoint(b)).toBe(pos(5));
        // A batch with no changes still moves checkpoints; unnamed ones stay.
        await store.applyBatch([], { [a]: pos(9) });
        expect(await store.getCheckpoint(a)).toBe(pos(9));
        expect(await store.getCheckpoint(b)).toBe(pos(5));
        expect(await store.getCheckpoint(checkpoint('never'))).toBeNull();
      });

      it('getCheckpoints answers many checkpoints in one call; one never moved, or reset, is absent', async () => {
        const c = collection('cps');
        const names = Array.from({ length: 13 }, (_, i) => checkpoint(`many-${i}`));
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch([put(c, { _id: 'x' }, pos(3))], Object.fromEntries(names.slice(0, 12).map((n, i) => [n, pos(i + 1)])));
        await store.reset([], [names[11]]);
        const found = await store.getCheckpoints([...names, checkpoint('never')]);
        expect(Object.fromEntries(found)).toEqual(Object.fromEntries(names.slice(0, 11).map((n, i) => [n, pos(i + 1)])));
        for (const n of names) expect(found.get(n) ?? null).toBe(await store.getCheckpoint(n));
        expect((await store.getCheckpoints([])).size).toBe(0);
      });

      it('a batch with a failing change (undeclared collection) leaves neither documents nor checkpoints', async () => {
        const c = collection('atomic');
        const undeclared = collection('undeclared');
        const cp = checkpoint('atomic');
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch([put(c, { _id: 'keep', v: 1 }, pos(1))], { [cp]: pos(1) });
        await expect(
          store.applyBatch(
            [
              put(c, { _id: 'new', v: 1 }, pos(2)),
              put(c, { _id: 'keep', v: 2 }, pos(2)),
              { collection: c, kind: 'delete', id: 'keep' },
              put(undeclared, { _id: 'x' }, pos(2)),
            ],
            { [cp]: pos(2) },
          ),
        ).rejects.toBeInstanceOf(ReadModelWriteError);
        expect(await store.get(c, 'new')).toBeNull();
        expect(await store.getStored(c, 'keep')).toEqual({ document: { _id: 'keep', v: 1 }, position: pos(1) });
        expect(await store.getCheckpoint(cp)).toBe(pos(1));
        // The store is still usable.
        await store.applyBatch([put(c, { _id: 'new', v: 3 }, pos(3))], { [cp]: pos(3) });
        expect(await store.get(c, 'new')).toEqual({ _id: 'new', v: 3 });
        expect(await store.getCheckpoint(cp)).toBe(pos(3));
      });
    });

    describe('guards: documents and checkpoints only move forward', () => {
      it('a put at an older or equal position leaves the stored document as it is; a later one replaces it', async () => {
        const c = collection('stale');
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch([put(c, { _id: 'a', v: 5 }, pos(5))], {});
        await store.applyBatch([put(c, { _id: 'a', v: 3 }, pos(3))], {}); // redelivered older event
        await store.applyBatch([put(c, { _id: 'a', v: 99 }, pos(5))], {}); // the same position again
        expect(await store.getStored(c, 'a')).toEqual({ document: { _id: 'a', v: 5 }, position: pos(5) });
        await store.applyBatch([put(c, { _id: 'a', v: 6 }, pos(6))], {});
        expect(await store.getStored(c, 'a')).toEqual({ document: { _id: 'a', v: 6 }, position: pos(6) });
      });

      it('in one batch, a stale put is skipped while the others apply, with the checkpoint', async () => {
        const c = collection('mixed');
        const cp = checkpoint('mixed');
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch([put(c, { _id: 'old', v: 1 }, pos(10))], { [cp]: pos(10) });
        await store.applyBatch([put(c, { _id: 'old', v: 0 }, pos(4)), put(c, { _id: 'new', v: 1 }, pos(11))], { [cp]: pos(11) });
        expect(await store.getStored(c, 'old')).toEqual({ document: { _id: 'old', v: 1 }, position: pos(10) });
        expect(await store.getStored(c, 'new')).toEqual({ document: { _id: 'new', v: 1 }, position: pos(11) });
        expect(await store.getCheckpoint(cp)).toBe(pos(11));
      });

      it('a checkpoint never moves back, with or without changes beside it', async () => {
        const c = collection('cpback');
        const [a, b] = [checkpoint('back-a'), checkpoint('back-b')];
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch([], { [a]: pos(9), [b]: pos(2) });
        await store.applyBatch([], { [a]: pos(4), [b]: pos(3) });
        expect(await store.getCheckpoint(a)).toBe(pos(9));
        expect(await store.getCheckpoint(b)).toBe(pos(3));
        await store.applyBatch([put(c, { _id: 'x', v: 1 }, pos(5))], { [a]: pos(5) });
        expect(await store.getCheckpoint(a)).toBe(pos(9));
        expect(await store.get(c, 'x')).toEqual({ _id: 'x', v: 1 }); // documents have guards of their own
        await store.applyBatch([], { [a]: pos(9) });
        expect(await store.getCheckpoint(a)).toBe(pos(9));
        await store.applyBatch([], { [a]: pos(12) });
        expect(await store.getCheckpoint(a)).toBe(pos(12));
      });
    });

    describe('fenced batches', () => {
      /** A collection, a checkpoint at pos(1) and a document `d` at pos(1), to see that nothing moved. */
      const fixture = async (label: string) => {
        const c = collection(label);
        const cp = checkpoint(label);
        await store.ensureCollections([{ name: c }]);
        await store.applyBatch([put(c, { _id: 'd', v: 1 }, pos(1))], { [cp]: pos(1) });
        const batch = (v: number): [DocumentChange[], Record<string, LogPosition>] => [
          [put(c, { _id: 'd', v }, pos(v)), put(c, { _id: `n${v}`, v }, pos(v)), { collection: c, kind: 'delete', id: 'gone' }],
          { [cp]: pos(v) },
        ];
        await store.applyBatch([put(c, { _id: 'gone' }, pos(1))], {});
        const unchanged = async () => {
          expect(await store.getStored(c, 'd')).toEqual({ document: { _id: 'd', v: 1 }, position: pos(1) });
          expect(await store.get(c, 'gone')).toEqual({ _id: 'gone' });
          expect(await store.getCheckpoint(cp)).toBe(pos(1));
        };
        return { c, cp, batch, unchanged };
      };
      const expectLeaseLost = async (write: Promise<void>, fence: LeaseFence) => {
        const error = await write.then(
          () => new Error('the fenced batch was written'),
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(LeaseLostError);
        expect({ lease: (error as LeaseLostError).lease, owner: (error as LeaseLostError).owner }).toEqual({
          lease: fence.name,
          owner: fence.owner,
        });
      };

      it('the holder of an unexpired lease writes the batch', async () => {
        const { c, cp, batch } = await fixture('holder');
        const l = lease('holder', ['w1']);
        expect(await store.acquireLease(l, 'w1', 10_000)).toBe(true);
        await store.applyBatch(...batch(2), [{ name: l, owner: 'w1' }]);
        expect(await store.getStored(c, 'd')).toEqual({ document: { _id: 'd', v: 2 }, position: pos(2) });
        expect(await store.get(c, 'n2')).toEqual({ _id: 'n2', v: 2 });
        expect(await store.get(c, 'gone')).toBeNull();
        expect(await store.getCheckpoint(cp)).toBe(pos(2));
      });

      it('a batch fenced by another owner of the lease writes nothing and rejects with LeaseLostError', async () => {
        const { c, batch, unchanged } = await fixture('other');
        const l = lease('other', ['w1', 'w2']);
        expect(await store.acquireLease(l, 'w1', 10_000)).toBe(true);
        await expectLeaseLost(store.applyBatch(...batch(2), [{ name: l, owner: 'w2' }]), { name: l, owner: 'w2' });
        await unchanged();
        expect(await store.get(c, 'n2')).toBeNull();
        // A lease nobody ever took fences too.
        const never = `ct-${tag}-lease-never`;
        await expectLeaseLost(store.applyBatch(...batch(3), [{ name: never, owner: 'w1' }]), { name: never, owner: 'w1' });
        await unchanged();
      });

      it('a holder whose lease ran out (taken over or not) or was released writes nothing', async () => {
        const { c, batch, unchanged } = await fixture('expired');
        const l = lease('expired', ['w1', 'w2']);
        expect(await store.acquireLease(l, 'w1', 300)).toBe(true);
        await sleep(500);
        // Expired, and nobody took it yet: still not the holder's to write under.
        await expectLeaseLost(store.applyBatch(...batch(2), [{ name: l, owner: 'w1' }]), { name: l, owner: 'w1' });
        await unchanged();
        expect(await store.acquireLease(l, 'w2', 10_000)).toBe(true);
        await expectLeaseLost(store.applyBatch(...batch(3), [{ name: l, owner: 'w1' }]), { name: l, owner: 'w1' });
        await unchanged();
        expect(await store.get(c, 'n3')).toBeNull();
        // The new holder writes; once it releases, its fence fails as well.
        await store.applyBatch(...batch(4), [{ name: l, owner: 'w2' }]);
        expect(await store.get(c, 'n4')).toEqual({ _id: 'n4', v: 4 });
        await store.releaseLease(l, 'w2');
        await expect(store.applyBatch(...batch(5), [{ name: l, owner: 'w2' }])).rejects.toBeInstanceOf(LeaseLostError);
        expect(await store.get(c, 'n5')).toBeNull();
      });

      it('every fence must hold: one lost lease among several refuses the whole batch', async () => {
        const { batch, unchanged } = await fixture('several');
        const [held, lost] = [lease('several-held', ['w1']), lease('several-lost', ['w1', 'w2'])];
        expect(await store.acquireLease(held, 'w1', 10_000)).toBe(true);
        expect(await store.acquireLease(lost, 'w2', 10_000)).toBe(true);
        const fences = [
          { name: held, owner: 'w1' },
          { name: lost, owner: 'w1' },
        ];
        await expectLeaseLost(store.applyBatch(...batch(2), fences), fences[1]);
        await unchanged();
        // An empty batch under fences is a check of the leases and nothing else.
        await expect(store.applyBatch([], {}, fences)).rejects.toBeInstanceOf(LeaseLostError);
        await store.applyBatch([], {}, [fences[0]]);
        await unchanged();
      });

      it("a runner's thirteen fences are checked together: all held writes; the one lost among them, wherever it is, is named", async () => {
        const { c, cp, batch, unchanged } = await fixture('thirteen');
        const names = Array.from({ length: 13 }, (_, i) => lease(`thirteen-${i}`, ['w1', 'w2']));
        for (const l of names) expect(await store.acquireLease(l, 'w1', 10_000)).toBe(true);
        const fences = names.map((l) => ({ name: l, owner: 'w1' }));
        for (const lost of [names[0], names[6], names[12]]) {
          await store.releaseLease(lost, 'w1');
          expect(await store.acquireLease(lost, 'w2', 10_000)).toBe(true);
          await expectLeaseLost(store.applyBatch(...batch(2), fences), { name: lost, owner: 'w1' });
          await unchanged();
          await store.releaseLease(lost, 'w2');
          expect(await store.acquireLease(lost, 'w1', 10_000)).toBe(true);
        }
        // Fences of two owners in one batch: each owner's leases are checked.
        await expectLeaseLost(store.applyBatch(...batch(2), [...fences, { name: names[3], owner: 'w2' }]), { name: names[3], owner: 'w2' });
        await unchanged();
        await store.applyBatch(...batch(2), fences);
        expect(await store.getStored(c, 'd')).toEqual({ document: { _id: 'd', v: 2 }, position: pos(2) });
        expect(await store.getCheckpoint(cp)).toBe(pos(2));
      });
    });

    describe('reset', () => {
      it('drops the named collections and checkpoints, and nothing else', async () => {
        const [gone, kept] = [collection('gone'), collection('kept')];
        const [cpGone, cpKept] = [checkpoint('gone'), checkpoint('kept')];
        await store.ensureCollections([{ name: gone, indexes: [{ fields: ['k'], unique: true }] }, { name: kept }]);
        await store.applyBatch([put(gone, { _id: 'a', k: 1 }), put(kept, { _id: 'b' })], { [cpGone]: pos(1), [cpKept]: pos(1) });
        await store.reset([gone], [cpGone]);
        expect(await store.getCheckpoint(cpGone)).toBeNull();
        expect(await store.getCheckpoint(cpKept)).toBe(pos(1));
        expect(await store.get(kept, 'b')).toEqual({ _id: 'b' });
        // A rebuild declares the collection again and starts empty, with the index rebuilt.
        await store.ensureCollections([{ name: gone, indexes: [{ fields: ['k'], unique: true }] }]);
        expect(await store.find(gone)).toEqual([]);
        await store.applyBatch([put(gone, { _id: 'a2', k: 1 })], {});
        await expect(store.applyBatch([put(gone, { _id: 'a3', k: 1 })], {})).rejects.toBeInstanceOf(ReadModelWriteError);
        // Resetting what does not exist is fine.
        await store.reset([collection('absent')], [checkpoint('absent')]);
      });
    });

    describe('leases', () => {

      it('a second owner is refused while the lease runs; the holder renews it', async () => {
        const l = lease('hold', ['w1', 'w2']);
        expect(await store.acquireLease(l, 'w1', 10_000)).toBe(true);
        expect(await store.acquireLease(l, 'w2', 10_000)).toBe(false);
        expect(await store.acquireLease(l, 'w1', 10_000)).toBe(true);
        expect(await store.acquireLease(l, 'w2', 10_000)).toBe(false);
        // Leases are independent by name.
        expect(await store.acquireLease(lease('other', ['w2']), 'w2', 10_000)).toBe(true);
      });

      it('an expired lease may be taken by another owner; renewing extends it', async () => {
        const l = lease('expiry', ['w1', 'w2']);
        expect(await store.acquireLease(l, 'w1', 1_000)).toBe(true);
        await sleep(500);
        expect(await store.acquireLease(l, 'w1', 1_000)).toBe(true); // renewed: runs 1 s from now
        await sleep(700);
        expect(await store.acquireLease(l, 'w2', 1_000)).toBe(false); // would have expired without the renewal
        await sleep(600);
        expect(await store.acquireLease(l, 'w2', 10_000)).toBe(true);
        expect(await store.acquireLease(l, 'w1', 10_000)).toBe(false);
      });

      it('release frees the lease, but only for its holder', async () => {
        const l = lease('release', ['w1', 'w2', 'w3']);
        expect(await store.acquireLease(l, 'w1', 10_000)).toBe(true);
        await store.releaseLease(l, 'w2'); // not the holder: no effect
        expect(await store.acquireLease(l, 'w3', 10_000)).toBe(false);
        await store.releaseLease(l, 'w1');
        expect(await store.acquireLease(l, 'w3', 10_000)).toBe(true);
        await store.releaseLease(`ct-${tag}-lease-never`, 'w1'); // releasing nothing is fine
      });

      it('leases() answers the stored leases by name in one call, expired ones with their expiry, released ones absent', async () => {
        const held = lease('listed-held', ['w1']);
        const lapsed = lease('listed-lapsed', ['w2']);
        const released = lease('listed-released', ['w3']);
        const before = Date.now();
        expect(await store.acquireLease(held, 'w1', 10_000)).toBe(true);
        expect(await store.acquireLease(lapsed, 'w2', 1)).toBe(true);
        expect(await store.acquireLease(released, 'w3', 10_000)).toBe(true);
        await store.releaseLease(released, 'w3');
        await sleep(5);
        const found = await store.leases([held, lapsed, released, `ct-${tag}-lease-never`]);
        expect([...found.keys()].sort()).toEqual([held, lapsed].sort());
        expect(found.get(held)!.owner).toBe('w1');
        expect(found.get(held)!.expiresAtMs).toBeGreaterThanOrEqual(before + 10_000);
        expect(found.get(lapsed)!.owner).toBe('w2');
        expect(found.get(lapsed)!.expiresAtMs).toBeLessThan(Date.now());
        expect((await store.leases([])).size).toBe(0);
      });

      it('a renewal whose write returns after the expiry it wrote (it waited behind a transaction) is written again from then', async () => {
        // A clock that runs a whole lease time during every step: each write returns after the expiry it wrote.
        const ttl = 10_000;
        let now = Date.now();
        const started = now;
        const clock = () => (now += ttl);
        const other = await make({ clock });
        try {
          const l = lease('late', ['w1']);
          expect(await other.store.acquireLease(l, 'w1', ttl)).toBe(true);
          const stored = (await other.store.leases([l])).get(l)!;
          expect(stored.owner).toBe('w1');
          // Written from the first step's time, the lease would have expired by the second step.
          expect(stored.expiresAtMs).toBeGreaterThan(started + 2 * ttl);
          expect(stored.expiresAtMs).toBeGreaterThan(now);
        } finally {
          await other.store.releaseLease(`ct-${tag}-lease-late`, 'w1');
          await other.cleanup();
        }
      });

      it('concurrent acquisitions of a free lease: exactly one owner wins', async () => {
        const owners = ['a', 'b', 'c', 'd', 'e'];
        const l = lease('race', owners);
        const results = await Promise.all(owners.map((o) => store.acquireLease(l, o, 10_000)));
        expect(results.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('partitions of one projection (PROJECTOR_PARTITIONS)', () => {
      it("each partition's lease fences its own batches, which move its own checkpoint and write into the collection the partitions share", async () => {
        const c = collection('split');
        await store.ensureCollections([{ name: c }]);
        const [p0, p1] = [0, 1].map((k) => lease(`split#${k}/2`, ['w1', 'w2']));
        const [cp0, cp1] = [0, 1].map((k) => checkpoint(`split_v1#${k}/2`));
        expect(await store.acquireLease(p0, 'w1', 10_000)).toBe(true);
        expect(await store.acquireLease(p1, 'w2', 10_000)).toBe(true);
        expect(await store.acquireLease(p1, 'w1', 10_000)).toBe(false);

        await store.applyBatch([put(c, { _id: 'a', k: 0 }, pos(3))], { [cp0]: pos(3) }, [{ name: p0, owner: 'w1' }]);
        await store.applyBatch([put(c, { _id: 'b', k: 1 }, pos(5))], { [cp1]: pos(5) }, [{ name: p1, owner: 'w2' }]);
        // w1 holds partition 0 only: a batch it fences by partition 1 writes nothing.
        const refused = await store.applyBatch([put(c, { _id: 'b', k: 9 }, pos(7))], { [cp1]: pos(7) }, [{ name: p1, owner: 'w1' }]).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(LeaseLostError);

        expect(await store.getCheckpoints([cp0, cp1])).toEqual(new Map([[cp0, pos(3)], [cp1, pos(5)]]));
        expect(sortedIds(await store.find(c))).toEqual(['a', 'b']);
        expect(await store.get(c, 'b')).toEqual({ _id: 'b', k: 1 });
        const held = await store.leases([p0, p1]);
        expect([held.get(p0)!.owner, held.get(p1)!.owner]).toEqual(['w1', 'w2']);
      });

      it("a dead worker's partition is taken over once its lease runs out, from that partition's checkpoint", async () => {
        const c = collection('takeover');
        await store.ensureCollections([{ name: c }]);
        const part = lease('takeover#1/4', ['dead', 'heir']);
        const cp = checkpoint('takeover_v1#1/4');
        expect(await store.acquireLease(part, 'dead', 300)).toBe(true);
        await store.applyBatch([put(c, { _id: 'x', v: 1 }, pos(4))], { [cp]: pos(4) }, [{ name: part, owner: 'dead' }]);
        expect(await store.acquireLease(part, 'heir', 10_000)).toBe(false);
        await sleep(400);
        expect(await store.acquireLease(part, 'heir', 10_000)).toBe(true);
        expect(await store.getCheckpoint(cp)).toBe(pos(4));
        const late = await store.applyBatch([put(c, { _id: 'x', v: 2 }, pos(6))], { [cp]: pos(6) }, [{ name: part, owner: 'dead' }]).catch((e: unknown) => e);
        expect(late).toBeInstanceOf(LeaseLostError);
        await store.applyBatch([put(c, { _id: 'x', v: 3 }, pos(6))], { [cp]: pos(6) }, [{ name: part, owner: 'heir' }]);
        expect(await store.getStored(c, 'x')).toEqual({ document: { _id: 'x', v: 3 }, position: pos(6) });
      });
    });
  });
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { ReadModelStore } from '../../shared/ports/read-model-store.port';
import { NotedQuery, notingQueries, sqlitePlans } from '../../../test/support/sqlite-query-plans';
import { documentId } from '../../shared/domain/streams';
import { USERS, usersProjection } from '../../../projections/users/users.projection';
import { NAMES, namesProjection, nameKey } from '../../../projections/search/names.projection';
import { decodeCursor, prefixRange, searchByIdOrName } from './prefix-search';

describe('prefixRange', () => {
  it('bounds the strings that start with the prefix in code point order', () => {
    expect(prefixRange('al')).toEqual({ gte: 'al', lt: 'am' });
    expect(prefixRange('a\uffff')).toEqual({ gte: 'a\uffff', lt: 'a\u{10000}' });
    expect(prefixRange('a\ud7ff')).toEqual({ gte: 'a\ud7ff', lt: 'a\ue000' });
    expect(prefixRange('a\u{10ffff}')).toEqual({ gte: 'a\u{10ffff}', lt: 'b' });
    expect(prefixRange('\u{10ffff}')).toEqual({ gte: '\u{10ffff}' });
  });
});

describe('searchByIdOrName on the users read model (SQLite)', () => {
  let dir: string;
  let store: SqliteReadModelStore;
  let queries: NotedQuery[];
  /** The store, with every query it is asked noted (to check how SQLite plans each). */
  let noting: ReadModelStore;

  /** A user's documents as the users and names projections fold them. */
  const user = (id: string, name: string, instance = 'i', position = '00000000000000000001') => [
    {
      collection: USERS,
      kind: 'put' as const,
      document: { _id: documentId(instance, id), instance_id: instance, id, name, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' },
      position,
    },
    {
      collection: NAMES,
      kind: 'put' as const,
      document: { _id: documentId(instance, 'user', id), instance_id: instance, kind: 'user', id, name_key: nameKey(name) },
      position,
    },
  ];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-prefix-search-'));
    store = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    await store.ensureCollections([...usersProjection.collections, ...namesProjection.collections]);
    const users = [
      user('alice', 'Zed'),
      user('alina', 'alpha'),
      user('bob', 'Alice Cooper'),
      user('carol', 'Alice Liddell'),
      user('dave', 'al'),
      user('erin', 'zebra'),
      user('alfred', 'al'),
      user('zoe', 'Al'),
      user('other-alice', 'alice', 'another-instance'),
    ];
    for (let i = 0; i < 40; i++) users.push(user(`z${String(i).padStart(2, '0')}`, `name ${i}`));
    await store.applyBatch(users.flat(), {});
    ({ store: noting, queries } = notingQueries(store));
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every page of a search, following `next`. */
  async function allPages(prefix: string, limit: number): Promise<string[][]> {
    const pages: string[][] = [];
    let after: string | undefined;
    do {
      const page = await searchByIdOrName<any>(noting, { collection: USERS, kind: 'user' }, 'i', { prefix, after, limit });
      pages.push(page.found.map((u) => u.id));
      after = page.next;
    } while (after !== undefined);
    return pages;
  }

  it('lists ids that start with the prefix, then names that do in any case, each once, in pages that follow on', async () => {
    // Ids case-sensitively, then names in any case ("alfred" and "alina" match both ways).
    expect(await allPages('al', 100)).toEqual([['alfred', 'alice', 'alina', 'dave', 'zoe', 'bob', 'carol']]);
    expect(await allPages('al', 2)).toEqual([
      ['alfred', 'alice'],
      ['alina', 'dave'],
      ['zoe', 'bob'],
      ['carol'],
    ]);
    expect(await allPages('Alice', 1)).toEqual([['bob'], ['carol']]);
    expect(await allPages('nobody', 10)).toEqual([[]]);
  });

  it('lists every user of the instance by id without a prefix, and nothing of another instance', async () => {
    const pages = await allPages('', 7);
    expect(pages.flat()).toEqual([...'alfred alice alina bob carol dave erin'.split(' '), ...Array.from({ length: 40 }, (_, i) => `z${String(i).padStart(2, '0')}`), 'zoe']);
    expect(pages.slice(0, -1).every((p) => p.length === 7)).toBe(true);
  });

  it('skips long runs of names whose ids were listed already, with a shorter page that goes on', async () => {
    // Users "z00".."z39", named "z name …": listed by id for the prefix "z", and their names match it too.
    const rename = Array.from({ length: 40 }, (_, i) => user(`z${String(i).padStart(2, '0')}`, `z name ${i}`, 'i', '00000000000000000002'));
    await store.applyBatch(rename.flat(), {});
    expect((await allPages('z', 3)).flat()).toEqual([...Array.from({ length: 40 }, (_, i) => `z${String(i).padStart(2, '0')}`), 'zoe', 'erin', 'alice']);
  });

  it('answers a page through an index, never a scan of the collection or a sort of it', async () => {
    queries.length = 0;
    await allPages('al', 2);
    await allPages('', 10);
    await searchByIdOrName<any>(noting, { collection: USERS, kind: 'user' }, 'i', { prefix: 'Alice', after: undefined, limit: 1 });
    const plans = sqlitePlans(join(dir, 'read-models.sqlite'), queries);
    expect(plans.length).toBeGreaterThan(5);
    expect(plans.some((plan) => plan.startsWith('SEARCH rm_names'))).toBe(true);
    for (const plan of plans) expect(plan).toMatch(/^SEARCH (rm_users USING INDEX ix_users_instance_id_id|rm_names USING INDEX ix_names_instance_id_kind_name_key_id) \(/);
    for (const plan of plans) expect(plan).not.toMatch(/TEMP B-TREE|SCAN/);
  });

  it('refuses an `after` that no page gave', () => {
    expect(() => decodeCursor('not a cursor')).toThrow(expect.objectContaining({ reason: 'invalid_after' }));
    expect(() => decodeCursor(['a', 'b'])).toThrow(expect.objectContaining({ reason: 'invalid_after' }));
    expect(decodeCursor(undefined)).toBeUndefined();
  });
});

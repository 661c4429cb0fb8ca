import { unprocessable } from '../../shared/domain/errors';
import { documentId } from '../../shared/domain/streams';
import { Document, Query, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { NamedKind, NameDocument, nameKey, NAMES } from '../../../projections/search/names.projection';

/** The longest `prefix` searched for (ids and names are at most a few hundred characters). */
export const PREFIX_MAX = 200;
export const SEARCH_PAGE_DEFAULT = 50;
export const SEARCH_PAGE_MAX = 100;

/**
 * The range of the strings that start with `prefix`, in code point order (the order SQLite's
 * BINARY collation and MongoDB's simple collation give UTF-8): from the prefix itself up to,
 * not including, the prefix with its last code point raised by one (past U+10FFFF, the one
 * before it); without `lt` (a prefix of only U+10FFFF) the range has no upper bound.
 */
export function prefixRange(prefix: string): { gte: string; lt?: string } {
  const points = [...prefix];
  while (points.length) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      // Lone surrogates are no characters: past U+D7FF comes U+E000.
      const next = last + 1 >= 0xd800 && last + 1 <= 0xdfff ? 0xe000 : last + 1;
      return { gte: prefix, lt: points.join('') + String.fromCodePoint(next) };
    }
  }
  return { gte: prefix };
}

/**
 * Where a search page ends: in the ids that start with the prefix (or every id, without a
 * prefix), or past them in the names that start with it (name, then id). Opaque to callers:
 * the `next` of a page is the `after` of the next one.
 */
type SearchCursor = { readonly by: 'id'; readonly id: string } | { readonly by: 'name'; readonly name: string; readonly id: string };

export const encodeCursor = (cursor: SearchCursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

export function decodeCursor(after: unknown): SearchCursor | undefined {
  if (after === undefined || after === '') return undefined;
  const invalid = () => unprocessable('invalid_after', 'after must be the "next" of a previous page');
  if (typeof after !== 'string' || after.length > 2048) throw invalid();
  let cursor: unknown;
  try {
    cursor = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const c = cursor as Record<string, unknown>;
  if (c?.by === 'id' && typeof c.id === 'string') return { by: 'id', id: c.id };
  if (c?.by === 'name' && typeof c.name === 'string' && typeof c.id === 'string') return { by: 'name', name: c.name, id: c.id };
  throw invalid();
}

export function parsePrefix(raw: unknown): string {
  if (raw === undefined) return '';
  if (typeof raw !== 'string' || raw.length > PREFIX_MAX) {
    throw unprocessable('invalid_prefix', `prefix must be given once, at most ${PREFIX_MAX} characters`);
  }
  return raw;
}

interface Searchable extends Document {
  readonly id: string;
}

/** Reads of names per page at most: those whose id also starts with the prefix were listed already and are skipped. */
const NAME_READS = 10;

/**
 * Pages of the users or rooms of an instance whose id starts with a prefix (case-sensitive, as
 * ids are) or whose name does (in any case), every one by id without a prefix. Ids come from
 * the collection's (instance_id, id) index, names from the names read model's (instance_id,
 * kind, name_key, id) index: a page costs its own size, however large the instance. Ids
 * matching come first, in id order, then names matching, in case-folded name order (one
 * matching by both is listed once, by id). A page holds `limit` documents, or fewer when it is
 * the last (then without `next`) or when many names in a row were listed by id already.
 */
export async function searchByIdOrName<D extends Searchable>(
  store: ReadModelStore,
  searched: { readonly collection: string; readonly kind: NamedKind },
  instanceId: string,
  request: { prefix: string; after: string | undefined; limit: number },
  /** Resolves once the names read model shows every write answered before (it lags, as writes do not wait for it). */
  namesCaughtUp: () => Promise<void> = async () => undefined,
): Promise<{ found: D[]; next?: string }> {
  const { prefix, limit } = request;
  const cursor = decodeCursor(request.after);
  const found: D[] = [];

  if (cursor === undefined || cursor.by === 'id') {
    const ids = { ...(prefix && prefixRange(prefix)), ...(cursor && { gt: cursor.id }) };
    const byId = await store.find<D>(searched.collection, {
      where: { instance_id: instanceId, ...(Object.keys(ids).length && { id: ids }) },
      sort: [{ field: 'id' }],
      limit: limit + 1,
    });
    if (byId.length > limit) {
      const page = byId.slice(0, limit);
      return { found: page, next: encodeCursor({ by: 'id', id: page[page.length - 1].id }) };
    }
    found.push(...byId);
    if (!prefix) return { found };
  }

  // Past the ids: the names in the range, after the cursor (every id is longer than '').
  await namesCaughtUp();
  const range = prefixRange(nameKey(prefix));
  const names = (where: Query['where'], sort: string[], count: number) =>
    store.find<NameDocument>(NAMES, { where: { instance_id: instanceId, kind: searched.kind, ...where }, sort: sort.map((field) => ({ field })), limit: count });
  let at: SearchCursor & { by: 'name' } = cursor?.by === 'name' ? cursor : { by: 'name', name: range.gte, id: '' };
  let next: string | undefined;
  const listed: string[] = [];
  read: for (let read = 0; ; read++) {
    if (read === NAME_READS) {
      next = encodeCursor(at);
      break;
    }
    const wanted = limit - found.length - listed.length + 1;
    const docs = await names({ name_key: at.name, id: { gt: at.id } }, ['id'], wanted);
    if (docs.length < wanted) {
      docs.push(...(await names({ name_key: { gt: at.name, ...(range.lt !== undefined && { lt: range.lt }) } }, ['name_key', 'id'], wanted - docs.length)));
    }
    for (const doc of docs) {
      if (!doc.id.startsWith(prefix)) {
        if (found.length + listed.length === limit) {
          next = encodeCursor(at);
          break read;
        }
        listed.push(doc.id);
      }
      at = { by: 'name', name: doc.name_key, id: doc.id };
    }
    if (docs.length < wanted) break;
  }
  const documents = new Map((await store.getMany<D>(searched.collection, listed.map((id) => documentId(instanceId, id)))).map((d) => [d.id, d]));
  // A name the names read model shows a moment before the collection does is left out.
  for (const id of listed) if (documents.has(id)) found.push(documents.get(id)!);
  return { found, ...(next !== undefined && { next }) };
}

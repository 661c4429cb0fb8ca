import { unprocessable } from '../../shared/domain/errors';
import { parseLimit } from '../../shared/http/query-params';
import { QUERY_MAX_CHARACTERS, QUERY_MAX_PHRASES, queryPhrases } from './domain/search-text';

export const SEARCH_PAGE_DEFAULT = 20;
export const SEARCH_PAGE_MAX = 100;
/** The most rooms `room_ids` may name. */
export const SEARCH_ROOMS_MAX = 100;
/** `relevance` ranks the newest this many matches (docs/api.md "Message search"). */
export const RELEVANCE_WINDOW = 1_000;

export type SearchOrder = 'relevance' | 'recent';

/** Where a page ended: the `order` of its last result (and its score, by relevance). */
export interface SearchCursor {
  readonly order: SearchOrder;
  readonly seq: number;
  readonly score?: number;
}

/** A message search as asked: the query parsed, every filter checked. */
export interface SearchRequest {
  readonly phrases: string[][];
  readonly roomIds?: readonly string[];
  readonly userId?: string;
  readonly from?: string;
  readonly to?: string;
  readonly hasAttachment?: boolean;
  readonly order: SearchOrder;
  readonly cursor?: SearchCursor;
  readonly limit: number;
}

const single = (query: Record<string, unknown>, name: string): string | undefined => {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw unprocessable(`invalid_${name}`, `${name} must be given once`);
  return value;
};

const time = (query: Record<string, unknown>, name: 'from' | 'to'): string | undefined => {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(at.getTime())) {
    throw unprocessable(`invalid_${name}`, `${name} must be a time in RFC 3339 (e.g. 2026-01-31T12:00:00Z)`);
  }
  return at.toISOString();
};

export const encodeSearchCursor = (cursor: SearchCursor): string => Buffer.from(JSON.stringify(cursor)).toString('base64url');

function decodeSearchCursor(raw: string | undefined, order: SearchOrder): SearchCursor | undefined {
  if (raw === undefined) return undefined;
  const invalid = () => unprocessable('invalid_cursor', 'cursor must be the "next" of a previous page of the same order');
  if (raw.length > 512) throw invalid();
  let cursor: Record<string, unknown>;
  try {
    cursor = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (cursor?.order !== order || !Number.isSafeInteger(cursor.seq)) throw invalid();
  if (order === 'relevance' && (typeof cursor.score !== 'number' || !Number.isFinite(cursor.score))) throw invalid();
  return { order, seq: cursor.seq as number, ...(order === 'relevance' && { score: cursor.score as number }) };
}

/** The query string of `GET …/search/messages`, checked: a clear 422 for each thing wrong. */
export function parseSearchRequest(query: Record<string, unknown>): SearchRequest {
  const q = query.q;
  if (q === undefined || q === '') throw unprocessable('empty_query', 'q must hold the words to search for');
  if (typeof q !== 'string') throw unprocessable('invalid_q', 'q must be given once');
  if (q.length > QUERY_MAX_CHARACTERS) throw unprocessable('query_too_long', `q must be at most ${QUERY_MAX_CHARACTERS} characters`);
  const phrases = queryPhrases(q);
  if (phrases.length === 0) throw unprocessable('empty_query', 'q must hold at least one word (letters or digits)');
  if (phrases.length > QUERY_MAX_PHRASES) throw unprocessable('query_too_long', `q may hold at most ${QUERY_MAX_PHRASES} words or phrases`);

  const rooms = single(query, 'room_ids');
  const roomIds = rooms === undefined ? undefined : [...new Set(rooms.split(',').filter((id) => id !== ''))];
  if (roomIds && (roomIds.length === 0 || roomIds.length > SEARCH_ROOMS_MAX)) {
    throw unprocessable('invalid_room_ids', `room_ids must name 1 to ${SEARCH_ROOMS_MAX} rooms, separated by commas`);
  }
  const from = time(query, 'from');
  const to = time(query, 'to');
  const attachment = single(query, 'has_attachment');
  if (attachment !== undefined && attachment !== 'true' && attachment !== 'false') {
    throw unprocessable('invalid_has_attachment', 'has_attachment must be true or false');
  }
  const order = single(query, 'order') ?? 'recent';
  if (order !== 'recent' && order !== 'relevance') throw unprocessable('invalid_order', 'order must be recent or relevance');
  return {
    phrases,
    ...(roomIds && { roomIds }),
    ...(single(query, 'user_id') !== undefined && { userId: single(query, 'user_id') }),
    ...(from !== undefined && { from }),
    ...(to !== undefined && { to }),
    ...(attachment !== undefined && { hasAttachment: attachment === 'true' }),
    order,
    cursor: decodeSearchCursor(single(query, 'cursor'), order),
    limit: parseLimit(query.limit, { fallback: SEARCH_PAGE_DEFAULT, max: SEARCH_PAGE_MAX }),
  };
}

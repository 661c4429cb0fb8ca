import type { FastifyInstance } from 'fastify';
import { badRequest } from '../domain/errors';

/** The largest request body the JSON APIs take (a larger one answers 413). */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * The most `custom_data` (users, rooms, attachments) may hold, as JSON bytes, unless
 * CUSTOM_DATA_MAX_BYTES says otherwise. Chatkit documented 5 KB for a user's; 32 KiB leaves apps
 * written against it more than six times that, while a caller can no longer write most of a
 * megabyte into the log (which keeps it forever) with every call.
 */
export const DEFAULT_CUSTOM_DATA_MAX_BYTES = 32 * 1024;

/**
 * chatkit-server sends JSON bodies with no Content-Type until some call sets it, then sends
 * `Content-Type: application/json` on every later request, bodiless ones included
 * (wire study §2.2 quirks). So every body is read as JSON whatever its Content-Type, and an
 * empty body is no body. Routes that take raw bytes or form data register their own parsers.
 */
export function registerLenientJsonParser(fastify: FastifyInstance, bodyLimit = JSON_BODY_LIMIT_BYTES): void {
  fastify.removeAllContentTypeParsers();
  // An empty Content-Type header counts as none.
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (request.headers['content-type'] === '') delete request.headers['content-type'];
    done();
  });
  fastify.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, undefined);
    const type = String(request.headers['content-type'] ?? '');
    if (type.startsWith('application/x-www-form-urlencoded')) {
      return done(null, Object.fromEntries(new URLSearchParams(text)));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(badRequest('invalid_json_body', 'The request body is not valid JSON') as unknown as Error, undefined);
    }
    done(unfitJsonBody(text, parsed) as unknown as Error, parsed);
  });
}

/** Deeper bodies are refused: the validation pipe and class-transformer recurse and would overflow the stack (a 500). */
export const MAX_JSON_DEPTH = 100;

/** Why a parsed JSON body is refused (the reason `invalid_json_body`), or null when it is fit to pass on. */
export function unfitJsonBody(text: string, parsed: unknown) {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
    return badRequest('invalid_json_body', `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
  }
  // A lone surrogate is no text: SQLite would store it as U+FFFD, so an id would no longer find itself.
  if (/\\u[dD][89a-fA-F]/.test(text) && holdsLoneSurrogate(parsed)) {
    return badRequest('invalid_json_body', 'The request body holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair)');
  }
  return null;
}

/** Whether JSON text opens more than `limit` arrays and objects inside each other (brackets in strings do not count). */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether any string or key in a parsed JSON value holds a lone surrogate (depth already bounded). */
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, item]) => LONE_SURROGATE.test(key) || holdsLoneSurrogate(item));
  }
  return false;
}

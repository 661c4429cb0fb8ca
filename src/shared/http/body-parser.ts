import type { FastifyInstance } from 'fastify';
import { badRequest } from '../domain/errors';

/**
 * chatkit-server sends JSON bodies with no Content-Type until some call sets it, then sends
 * `Content-Type: application/json` on every later request, bodiless ones included
 * (wire study §2.2 quirks). So every body is read as JSON whatever its Content-Type, and an
 * empty body is no body. Routes that take raw bytes or form data register their own parsers.
 */
export function registerLenientJsonParser(fastify: FastifyInstance, bodyLimit = 1024 * 1024): void {
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
    try {
      done(null, JSON.parse(text));
    } catch {
      done(badRequest('invalid_json_body', 'The request body is not valid JSON') as unknown as Error, undefined);
    }
  });
}

import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { toErrorResponse } from './error.filter';

/**
 * The longest path segment the router accepts. Ids are at most 160 characters (file names
 * 255), and percent-encoding may take 12 characters per character; anything longer is no id.
 */
export const MAX_PATH_SEGMENT_LENGTH = 2048;

/**
 * Fastify options that make the errors the framework raises before any route runs answer in
 * the service's JSON shape like every other error: an overlong or undecodable path segment,
 * and a request Node cannot parse (headers too large, a malformed request line).
 */
export const frameworkErrorOptions: Pick<FastifyServerOptions, 'routerOptions' | 'frameworkErrors' | 'clientErrorHandler'> = {
  routerOptions: { maxParamLength: MAX_PATH_SEGMENT_LENGTH },
  frameworkErrors(error: Error, request: FastifyRequest, reply: FastifyReply) {
    const { status, body } = toErrorResponse(error, request.url);
    void reply.status(status).send(body);
  },
  clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, reason, description] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'The request line and headers are larger than the server accepts']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'request_timeout', 'The request did not arrive in time']
          : [400, 'malformed_request', 'The request is not valid HTTP'];
    const body = JSON.stringify({ error: `bad_request/${reason}`, error_description: description });
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  },
};

import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCategory } from '../domain/errors';
import { JSON_BODY_LIMIT_BYTES } from './body-parser';
import { PresetAnswer } from './preset-answer';

export interface ErrorBody {
  readonly error: string;
  readonly error_description: string;
}

const CATEGORY_OF_STATUS: Record<number, ErrorCategory> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'bad_request',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'bad_request',
  422: 'unprocessable_entity',
  429: 'too_many_requests',
  503: 'unavailable',
};

/** A body over the JSON APIs' limit, whichever way the framework reports it (Nest keeps only its status). */
const BODY_TOO_LARGE: [reason: string, description: string] = [
  'body_too_large',
  `The request body is larger than ${JSON_BODY_LIMIT_BYTES} bytes (1 MiB), the most this API takes; nothing was done`,
];

/** Fastify's errors whose own text would repeat what the client sent (a whole 10 KB path), or say too little. */
const FRAMEWORK_REASONS: Record<string, [reason: string, description: string]> = {
  FST_ERR_MAX_PARAM_LENGTH: ['path_segment_too_long', 'A path segment is longer than any id can be'],
  FST_ERR_BAD_URL: ['invalid_path', 'The path is not valid percent-encoded text'],
  FST_ERR_CTP_BODY_TOO_LARGE: BODY_TOO_LARGE,
};

/** `services/<service>/` for requests under /services, so clients see the strings the SDKs test for. */
export const servicePrefix = (url: string): string => {
  const m = /^\/services\/([^/?]+)\//.exec(url);
  return m ? `services/${m[1]}/` : '';
};

/** Maps anything thrown while handling a request to a status and an error body. */
export function toErrorResponse(error: unknown, url: string): { status: number; body: ErrorBody } {
  const prefix = servicePrefix(url);
  if (error instanceof DomainError) {
    return { status: error.status, body: { error: prefix + error.code, error_description: error.description } };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const category = CATEGORY_OF_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
    if (status === 413) return { status, body: { error: `${prefix}${category}/${BODY_TOO_LARGE[0]}`, error_description: BODY_TOO_LARGE[1] } };
    const reason = status === 404 ? 'route_not_found' : status === 405 ? 'method_not_allowed' : 'request_rejected';
    const response = error.getResponse();
    const message =
      typeof response === 'object' && response && 'message' in response
        ? String((response as { message: unknown }).message)
        : error.message;
    return {
      status,
      body: {
        error: `${prefix}${category}/${reason}`,
        error_description: status === 404 ? `No route serves ${url.split('?')[0]}` : message,
      },
    };
  }
  // Fastify's own errors (body too large, bad content length, a path segment too long…) carry a 4xx statusCode.
  const fastifyStatus = (error as { statusCode?: number })?.statusCode;
  if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
    const category = CATEGORY_OF_STATUS[fastifyStatus] ?? 'bad_request';
    const code = String((error as { code?: string }).code ?? 'request_rejected');
    const [reason, description] = FRAMEWORK_REASONS[code] ?? [code.toLowerCase(), (error as Error).message];
    return { status: fastifyStatus, body: { error: `${prefix}${category}/${reason}`, error_description: description } };
  }
  return {
    status: 500,
    body: { error: `${prefix}internal_error/unexpected`, error_description: 'An unexpected error occurred' },
  };
}

@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('http');

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (error instanceof PresetAnswer) {
      if (!reply.sent) void reply.status(error.status).headers(error.headers).send(error.body);
      return;
    }
    const { status, body } = toErrorResponse(error, request.url);
    if (status >= 500) this.logger.error(`${request.method} ${request.url.split('?')[0]} failed`, withCauses(error));
    if (reply.sent) return;
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}

/** A stack and the stacks of its causes: a 503 "not saved" names the storage failure behind it. */
const withCauses = (error: unknown): string | undefined => {
  const stacks: string[] = [];
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) stacks.push(e.stack ?? String(e));
  return stacks.length ? stacks.join('\ncaused by: ') : undefined;
};

import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../domain/errors';
import { toErrorResponse } from './error.filter';

/** Chat routes serve both API versions the SDKs use, over the same data (wire study §7.1). */
export const CHATKIT_ROUTE = 'services/chatkit/:version/:instanceId';

export type ChatApiVersion = 2 | 6;

/** `v2` → 2, `v6` → 6; any other version is a route that does not exist. */
export const parseChatApiVersion = (raw: string): ChatApiVersion => {
  if (raw === 'v2') return 2;
  if (raw === 'v6') return 6;
  throw notFound('route_not_found', `Chat API version ${raw} does not exist (v2 and v6 do)`);
};

@Injectable()
export class ChatApiVersionPipe implements PipeTransform<string, ChatApiVersion> {
  transform(value: string, _metadata: ArgumentMetadata): ChatApiVersion {
    return parseChatApiVersion(value);
  }
}

const CHAT_VERSION = /^\/services\/chatkit\/([^/?]+)\//;

/**
 * Every chat HTTP route answers only under v2 and v6. (Subscriptions opened over /ws never
 * pass this hook: their handlers parse the version with `parseChatApiVersion`.)
 */
export function rejectUnknownChatVersions(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const version = CHAT_VERSION.exec(request.url)?.[1];
    if (version === undefined) return done();
    try {
      parseChatApiVersion(version);
      done();
    } catch (error) {
      const { status, body } = toErrorResponse(error, request.url);
      void reply.status(status).send(body);
    }
  });
}

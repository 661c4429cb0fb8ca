import { ArgumentMetadata, Injectable, NotFoundException, PipeTransform } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';

/** Chat routes serve both API versions the SDKs use, over the same data (wire study §7.1). */
export const CHATKIT_ROUTE = 'services/chatkit/:version/:instanceId';

export type ChatApiVersion = 2 | 6;

/** `v2` → 2, `v6` → 6; any other version is a route that does not exist. */
@Injectable()
export class ChatApiVersionPipe implements PipeTransform<string, ChatApiVersion> {
  transform(value: string, _metadata: ArgumentMetadata): ChatApiVersion {
    if (value === 'v2') return 2;
    if (value === 'v6') return 6;
    throw new NotFoundException(`Chat API version ${value} does not exist (v2 and v6 do)`);
  }
}

const CHAT_VERSION = /^\/services\/chatkit\/([^/?]+)\//;

/** Every chat route answers only under v2 and v6; other versions are routes that do not exist. */
export function rejectUnknownChatVersions(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    const version = CHAT_VERSION.exec(request.url)?.[1];
    if (version === undefined || version === 'v2' || version === 'v6') return done();
    void reply.status(404).send({
      error: 'services/chatkit/not_found/route_not_found',
      error_description: `Chat API version ${version} does not exist (v2 and v6 do)`,
    });
  });
}

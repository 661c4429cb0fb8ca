import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { ATTACHMENT_RESOLVER, AttachmentResolver } from '../../messages/presentation/attachments.port';
import { MessageResponse, presentMessage } from '../../messages/presentation/message.presenter';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { phraseRanges } from '../domain/search-text';
import { MessageSearch } from '../message-search';
import { encodeSearchCursor, parseSearchRequest, SearchRequest } from '../search-request';

/** Where a query's phrase stands in a result: the index of a text part in `parts`, and UTF-16 offsets in its `content`. */
export interface Highlight {
  readonly part: number;
  readonly start: number;
  readonly end: number;
}

export interface SearchMessagesResponse {
  readonly results: { readonly message: MessageResponse; readonly highlights: Highlight[] }[];
  readonly next?: string;
}

export class SearchMessagesQuery {
  constructor(
    readonly actor: RequestActor,
    readonly request: SearchRequest,
  ) {}
}

@QueryHandler(SearchMessagesQuery)
export class SearchMessagesHandler implements IQueryHandler<SearchMessagesQuery, SearchMessagesResponse> {
  constructor(
    private readonly search: MessageSearch,
    @Inject(ATTACHMENT_RESOLVER) private readonly attachments: AttachmentResolver,
  ) {}

  async execute({ actor, request }: SearchMessagesQuery): Promise<SearchMessagesResponse> {
    const page = await this.search.search(actor, request);
    return {
      results: page.messages.map((doc) => ({
        message: presentMessage(6, doc, this.attachments),
        highlights: doc.parts.flatMap((part, index) =>
          'content' in part && part.type.toLowerCase().startsWith('text/')
            ? phraseRanges(part.content, request.phrases).map((r) => ({ part: index, ...r }))
            : [],
        ),
      })),
      ...(page.next && { next: encodeSearchCursor(page.next) }),
    };
  }
}

/**
 * Message search (docs/api.md "Message search"): the messages of the rooms the caller is a
 * member of (su: of the whole instance) holding every word or phrase of `q`, newest first or
 * best first, a page at a time. A v6 route beside the rooms' own: the same tokens, the same
 * message shape; no original SDK calls it.
 */
@Controller('services/chatkit/v6/:instanceId/search')
export class SearchMessagesController {
  constructor(private readonly queries: QueryBus) {}

  @Get('messages')
  @Requires(Access.permission('room:messages:get'))
  @ApiDoc((swagger) => swagger.ApiOkResponse({
    description:
      '`{results: [{message, highlights: [{part, start, end}]}], next?}`: v6 messages of the rooms the caller is a member of (su: every room), newest first or best first; ' +
      "each highlight is a place of a query's word or phrase in a text part (`part`: its index in `parts`; `start`, `end`: UTF-16 offsets in its `content`); `next` is the `cursor` of the next page, absent on the last",
  }))
  search(
    @Param('instanceId') _instanceId: string,
    @Query() query: Record<string, unknown>,
    @CurrentActor() actor: RequestActor,
  ): Promise<SearchMessagesResponse> {
    return this.queries.execute(new SearchMessagesQuery(actor, parseSearchRequest(query)));
  }
}

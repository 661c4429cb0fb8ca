import { Inject, Injectable } from '@nestjs/common';
import { caughtUpWithLog } from '../../shared/application/write-path/caught-up-with-log';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { EVENT_STORE, EventStore } from '../../shared/ports/event-store.port';
import { Condition, READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { checkpointName } from '../../../projections/projection';
import { MESSAGES, MessageDocument, messagesProjection } from '../../../projections/messages/messages.projection';
import { MEMBERSHIPS, MembershipDocument, membershipsProjection } from '../../../projections/rooms/memberships.projection';
import { THREAD_REPLIES, threadsProjection } from '../../../projections/threads/threads.projection';
import {
  MESSAGE_SEARCH,
  MESSAGE_SEARCH_INDEX,
  MessageSearchDocument,
  messageSearchProjection,
} from '../../../projections/search/message-search.projection';
import { searchFacets } from './domain/search-text';
import { RELEVANCE_WINDOW, SearchCursor, SearchRequest } from './search-request';

/** Who searches: su searches the whole instance, a user the rooms they are a member of. */
export interface Searcher {
  readonly instanceId: string;
  readonly userId?: string;
  readonly su: boolean;
}

export interface SearchPage {
  readonly messages: MessageDocument[];
  /** Where the next page starts, when this one is full. */
  readonly next?: SearchCursor;
}

/** What search reads: each must have folded everything the log held when the search began. */
const SEARCH_READS = [messageSearchProjection, membershipsProjection, messagesProjection, threadsProjection].map(checkpointName);

/** A message as everyone may see it (search is one index for all its callers: it holds no shadowed message). */
const shown = (m: MessageDocument): boolean => m.visible && !m.deleted_at;

/**
 * Message search over the search index, with membership in the query itself: the rooms a user
 * may search are a facet group of the index query (their rooms, or those of `room_ids` they
 * are in), so a page is never filtered after it is cut and a room left or removed from is out
 * of the next search. The index, the memberships and the messages are read once they have
 * caught up with the log (a leave answered before the search counts).
 */
@Injectable()
export class MessageSearch {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
  ) {}

  async search(searcher: Searcher, request: SearchRequest): Promise<SearchPage> {
    await caughtUpWithLog(this.events, this.readYourWrites, SEARCH_READS, { reason: 'search_index_lag', what: 'The search index' });
    const rooms = await this.searchableRooms(searcher, request.roomIds);
    if (rooms !== null && rooms.length === 0) return { messages: [] };
    const { instanceId } = searcher;
    const facets: string[][] = [
      rooms === null ? [searchFacets.instance(instanceId)] : rooms.map((roomId) => searchFacets.room(instanceId, roomId)),
      ...(request.userId !== undefined ? [[searchFacets.sender(instanceId, request.userId)]] : []),
      ...(request.hasAttachment === true ? [[searchFacets.attachment]] : []),
    ];
    const where: Record<string, Condition> = {};
    if (request.from !== undefined || request.to !== undefined) {
      where.created_at = { ...(request.from !== undefined && { gte: request.from }), ...(request.to !== undefined && { lt: request.to }) };
    }
    if (request.hasAttachment === false) where.has_attachment = false;
    const relevance = request.order === 'relevance';
    const matches = await this.readModels.searchText<MessageSearchDocument>(MESSAGE_SEARCH, {
      index: MESSAGE_SEARCH_INDEX,
      phrases: request.phrases,
      facets,
      where,
      order: relevance ? 'relevance' : 'newest',
      ...(request.cursor && { after: { order: request.cursor.seq, score: request.cursor.score } }),
      window: RELEVANCE_WINDOW,
      limit: request.limit,
    });
    const ids = matches.map((m) => m.document._id);
    const found = await this.readModels.getMany<MessageDocument>(MESSAGES, ids);
    const byId = new Map(found.filter(shown).map((m) => [m._id, m]));
    // The read models have folded the same log, so each match is a message of its room's pages or
    // a reply shown in its thread alone (found with its `parent_id`, as Slack's and Stream's search find them).
    const inThreads = ids.filter((id) => !byId.has(id));
    if (inThreads.length) for (const reply of await this.readModels.getMany<MessageDocument>(THREAD_REPLIES, inThreads)) if (shown(reply)) byId.set(reply._id, reply);
    const last = matches[matches.length - 1];
    return {
      messages: matches.flatMap((m) => byId.get(m.document._id) ?? []),
      ...(matches.length === request.limit && { next: { order: request.order, seq: last.order, ...(relevance && { score: last.score }) } }),
    };
  }

  /** The rooms searched: null for the whole instance (su without room_ids), else the ids. */
  private async searchableRooms(searcher: Searcher, roomIds: readonly string[] | undefined): Promise<string[] | null> {
    if (searcher.su) return roomIds ? [...roomIds] : null;
    if (searcher.userId === undefined) return [];
    const memberships = await this.readModels.find<MembershipDocument>(MEMBERSHIPS, {
      where: { instance_id: searcher.instanceId, user_id: searcher.userId, ...(roomIds && { room_id: { in: roomIds } }) },
    });
    return memberships.map((m) => m.room_id);
  }
}

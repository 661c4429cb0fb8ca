import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import {
  LatestReaction,
  REACTION_SUMMARIES,
  ReactionDocument,
  reactionsProjection,
  REACTIONS,
  ReactionSummaryDocument,
  SHADOW_REACTIONS,
  LATEST_REACTIONS,
} from '../../../projections/reactions/reactions.projection';
import { checkpointName } from '../../../projections/projection';

/** A reaction change answers once the reactions read model shows it. */
export const REACTION_READS: readonly string[] = [checkpointName(reactionsProjection)];

/** What a message shows of its reactions (only a message that has some). */
export interface MessageReactions {
  readonly counts: Readonly<Record<string, number>>;
  /** The caller's own reaction types (none for a token without a user). */
  readonly mine: readonly string[];
  readonly latest: readonly LatestReaction[];
}

/**
 * v6 messages as answered, each with `reactions` when it has some (an additive field: the
 * original SDKs read the fields they know and ignore others, checked in chatkit-client 1.14.1,
 * chatkit-swift's PCPayloadDeserializer and chatkit-android's Gson types). v2 shows none.
 * `viewer`: a shadow-banned caller, whose own reactions added under the ban count for them.
 */
export async function withReactions<M extends Record<string, unknown>>(
  reactions: ReactionsReadModel,
  version: number,
  instanceId: string,
  messages: M[],
  userId: string | undefined,
  viewer?: string,
): Promise<M[]> {
  if (version !== 6) return messages;
  const found = await reactions.ofMessages(instanceId, messages.map((m) => m.id as number), userId, viewer);
  if (found.size === 0) return messages;
  return messages.map((m) => {
    const own = found.get(m.id as number);
    return own ? { ...m, reactions: own } : m;
  });
}

export interface Reaction {
  readonly type: string;
  readonly user_id: string;
  readonly created_at: string;
}

/** Reads of the reactions read model: who reacted, page by page, and what pages of messages show. */
@Injectable()
export class ReactionsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /**
   * Oldest first, after the cursor `after` (an opaque position a previous page answered as
   * `next`); with `viewer` (a shadow-banned caller), their own reactions added under the ban too.
   */
  async page(
    instanceId: string,
    messageId: number,
    options: { type?: string; after?: string; limit: number; viewer?: string },
  ): Promise<{ reactions: Reaction[]; next?: string }> {
    const query = (collection: string, where: Record<string, string>) =>
      this.readModels.find<ReactionDocument>(collection, {
        where: {
          instance_id: instanceId,
          message_id: messageId,
          ...where,
          ...(options.type !== undefined && { type: options.type }),
          ...(options.after !== undefined && { position: { gt: options.after } }),
        },
        sort: [{ field: 'position' }],
        limit: options.limit + 1,
      });
    const shown = await query(REACTIONS, {});
    const docs =
      options.viewer === undefined
        ? shown
        : [...shown, ...(await query(SHADOW_REACTIONS, { user_id: options.viewer }))].sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    const page = docs.slice(0, options.limit);
    return {
      reactions: page.map(({ type, user_id, created_at }) => ({ type, user_id, created_at })),
      ...(docs.length > options.limit && { next: page[page.length - 1].position }),
    };
  }

  /**
   * The reactions of each message of a page that has any, by message id: one read for the
   * summaries and, when some message has reactions and the caller is a user, one for theirs.
   * With `viewer` (a shadow-banned caller), one more for their reactions added under the ban,
   * counted into what they see as if everyone saw them.
   */
  async ofMessages(instanceId: string, messageIds: readonly number[], userId: string | undefined, viewer?: string): Promise<Map<number, MessageReactions>> {
    const found = await this.shownToEveryone(instanceId, messageIds, userId);
    if (viewer === undefined || messageIds.length === 0) return found;
    const hidden = await this.readModels.find<ReactionDocument>(SHADOW_REACTIONS, {
      where: { instance_id: instanceId, user_id: viewer, message_id: { in: [...messageIds] } },
    });
    for (const r of hidden) {
      const before = found.get(r.message_id) ?? { counts: {}, mine: [], latest: [] };
      const latest = [...before.latest, { type: r.type, user_id: r.user_id, created_at: r.created_at }]
        .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0))
        .slice(0, LATEST_REACTIONS);
      found.set(r.message_id, {
        counts: { ...before.counts, [r.type]: (before.counts[r.type] ?? 0) + 1 },
        mine: before.mine.includes(r.type) ? before.mine : [...before.mine, r.type],
        latest,
      });
    }
    return found;
  }

  private async shownToEveryone(instanceId: string, messageIds: readonly number[], userId: string | undefined): Promise<Map<number, MessageReactions>> {
    const found = new Map<number, MessageReactions>();
    if (messageIds.length === 0) return found;
    const summaries = await this.readModels.find<ReactionSummaryDocument>(REACTION_SUMMARIES, {
      where: { instance_id: instanceId, message_id: { in: [...messageIds] } },
    });
    if (summaries.length === 0) return found;
    const mine = new Map<number, string[]>();
    if (userId !== undefined) {
      const own = await this.readModels.find<ReactionDocument>(REACTIONS, {
        where: { instance_id: instanceId, user_id: userId, message_id: { in: summaries.map((s) => s.message_id) } },
      });
      for (const r of own) mine.set(r.message_id, [...(mine.get(r.message_id) ?? []), r.type]);
    }
    for (const s of summaries) found.set(s.message_id, { counts: s.counts, mine: mine.get(s.message_id) ?? [], latest: s.latest });
    return found;
  }
}

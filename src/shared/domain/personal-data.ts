import { DomainEvent } from './event';

/**
 * Which data keys a destroy takes: by id, by id prefix (a message's every version, an
 * instance's whole history), or by owner (every key a user incarnation wrote under).
 * `createdUpTo` (milliseconds since the epoch) leaves keys created after it: a delete replayed
 * later (the sweep that heals a crash) must not reach what a later user of the same ids wrote.
 */
export type DataKeySelector = (
  | { readonly ids: readonly string[] }
  | { readonly prefix: string }
  /** Many subtrees at once (a deleted room's messages): one durable write for all of them. */
  | { readonly prefixes: readonly string[] }
  | { readonly owner: string }
) & {
  readonly createdUpTo?: number;
};

/** The data key an event's personal fields are sealed with, and whose content it is. */
export interface DataKeyOf {
  readonly id: string;
  /** The user incarnation who wrote it (`dataKeyIds.owner`), or null. */
  readonly owner: string | null;
}

/**
 * The personal fields of one event type: which fields of `data` are sealed in the log, under
 * which data key, and what they read as once that key is destroyed (the event then also
 * carries `erased: true`). Pure: beside each context's events.
 */
export interface PersonalDataRule<E extends DomainEvent = DomainEvent> {
  readonly type: E['type'];
  readonly fields: readonly (keyof E['data'] & string)[];
  /** What the sealed fields read as once their key is destroyed: values every projection folds as it would a deleted thing's. */
  readonly erased: { readonly [F in keyof E['data']]?: E['data'][F] };
  /** The key, or null when this event holds nothing to seal (e.g. a stream name it cannot place). */
  keyOf(event: E, streamName: string): DataKeyOf | null;
  /**
   * The key of an event written before `keyOf` could place it (by a release whose events did not
   * yet name what the key needs, e.g. the incarnation an update belongs to), found from the log
   * as stored (fields that are never sealed). Only the offline rewrite of a data directory into
   * the sealed form (`data-dir:seal`) asks, for the events `keyOf` answers null.
   */
  keyOfWritten?(event: E, streamName: string, history: ShredHistory): Promise<DataKeyOf | null>;
  /**
   * Sealed on append only when the operator asks for it (`withOptIns`); events sealed while it
   * was asked for are opened, and read as erased, whatever it is now.
   */
  readonly optIn?: PersonalDataOptIn;
}

/** Content an operator chooses to have sealed (FEEDS_SEAL_ITEMS): feed items are often public broadcasts. */
export type PersonalDataOptIn = 'feed_items';

/**
 * Keys an event makes ready for events to come (created durably with its append, in one write
 * for many), so that the appends that use them write no key of their own.
 */
export interface PreparedKeysRule<E extends DomainEvent = DomainEvent> {
  readonly type: E['type'];
  prepares(event: E, streamName: string): readonly DataKeyOf[];
}

/** What a rule may read to find what a delete destroys: the log as stored (the fields it reads are never sealed). */
export interface ShredHistory {
  /** A stream's events in pages, forwards. */
  readStream(streamName: string, options: { fromRevision: number; maxCount: number }): Promise<readonly { type: string; data: unknown }[]>;
}

/** Events a rule reads per page of a stream. */
const HISTORY_PAGE = 1_000;

/** A stream's events as stored, read a page at a time: what a rule looks through (never its sealed fields). */
export async function* eventsOfStream(history: ShredHistory, streamName: string): AsyncGenerator<{ type: string; data: unknown }> {
  for (let from = 0; ; from += HISTORY_PAGE) {
    const page = await history.readStream(streamName, { fromRevision: from, maxCount: HISTORY_PAGE });
    yield* page;
    if (page.length < HISTORY_PAGE) return;
  }
}

/** What a delete destroys once its event is in the log. */
export interface ShredRule<E extends DomainEvent = DomainEvent> {
  readonly type: E['type'];
  /**
   * Destroyed by the shred sweep's next pass (ShredSweep, every few seconds) rather than
   * before the append is answered: for events appended far more often than anyone deletes
   * (a Beams publish's delivery), whose own destroy would cost each a write of the key store.
   * Only for keys selected by id (`{ ids }`) whose ids are never made again (random ones): the
   * sweep destroys a page of such events' keys in one write.
   */
  readonly deferred?: boolean;
  destroys(event: E, streamName: string, history: ShredHistory): readonly DataKeySelector[] | Promise<readonly DataKeySelector[]>;
}

/** A rule for each event of a union (`PersonalDataRuleOf<ParleyEvent>`): a renamed field fails the build. */
export type PersonalDataRuleOf<E extends DomainEvent> = E extends DomainEvent ? PersonalDataRule<E> : never;
export type ShredRuleOf<E extends DomainEvent> = E extends DomainEvent ? ShredRule<E> : never;
export type PreparedKeysRuleOf<E extends DomainEvent> = E extends DomainEvent ? PreparedKeysRule<E> : never;

/** Any event type's rules, as code that handles every type holds them (it passes each rule only events of its type). */
export interface AnyPersonalDataRule {
  readonly type: string;
  readonly fields: readonly string[];
  readonly erased: object;
  keyOf(event: never, streamName: string): DataKeyOf | null;
  keyOfWritten?(event: never, streamName: string, history: ShredHistory): Promise<DataKeyOf | null>;
  readonly optIn?: PersonalDataOptIn;
}

/**
 * The sealing rules as a process applies them: a rule the operator did not opt into seals
 * nothing on append (its `keyOf` answers null) but still names what its events read as once erased.
 */
export const withOptIns = <R extends AnyPersonalDataRule>(rules: readonly R[], optedIn: ReadonlySet<PersonalDataOptIn>): R[] =>
  rules.map((rule) => (rule.optIn === undefined || optedIn.has(rule.optIn) ? rule : { ...rule, keyOf: () => null, keyOfWritten: undefined }));
export interface AnyPreparedKeysRule {
  readonly type: string;
  prepares(event: never, streamName: string): readonly DataKeyOf[];
}
export interface AnyShredRule {
  readonly type: string;
  readonly deferred?: boolean;
  destroys(event: never, streamName: string, history: ShredHistory): readonly DataKeySelector[] | Promise<readonly DataKeySelector[]>;
}

const segment = (part: string | number) => encodeURIComponent(String(part));

/**
 * Data key ids, hierarchical so that each delete destroys exactly its subtree by prefix. Each
 * segment is URI-encoded: an id holding `/` cannot reach into a neighbour's subtree.
 */
export const dataKeyIds = {
  instance: (instanceId: string) => `${segment(instanceId)}/`,
  /**
   * Every version of one message: its sending (version 0) and each edit. Message ids are unique
   * in an instance, so the room is not part of it: the keys of version 0 can then be made
   * ready when a block of ids is reserved, off the path of each send.
   */
  message: (instanceId: string, messageId: number) => `${segment(instanceId)}/message/${segment(messageId)}/`,
  messageVersion: (instanceId: string, messageId: number, version: string | number) => `${dataKeyIds.message(instanceId, messageId)}${segment(version)}`,
  /** A user incarnation (the same id created again is another person). */
  owner: (instanceId: string, userId: string, userCreatedAt: string | undefined) => `${segment(instanceId)}/${segment(userId)}@${userCreatedAt ?? ''}`,
  /** A room incarnation's name and custom data (the same id created again is another room). */
  room: (instanceId: string, roomId: string, roomCreatedAt: string) => `${segment(instanceId)}/room/${segment(roomId)}@${segment(roomCreatedAt)}`,
  /** An attachment's (or files API upload's) names and custom data: ids are random, never used twice. */
  attachment: (instanceId: string, attachmentId: string) => `${segment(instanceId)}/attachment/${segment(attachmentId)}`,
  /**
   * Users' profile keys made ready ahead, a block at a time (one durable write per block, none
   * per new user): a key of the block is named by the user's creation (`profile_key`), and
   * destroyed by the user's delete or the instance wipe.
   */
  profileBlock: (instanceId: string, block: string) => `${segment(instanceId)}/profile/${segment(block)}/`,
  /**
   * A user incarnation's profile key where the creation names none (users created before
   * profiles were sealed): under its owner's subtree, which an erasure destroys whole.
   */
  profile: (instanceId: string, userId: string, userCreatedAt: string) => `${dataKeyIds.owner(instanceId, userId, userCreatedAt)}/profile`,
  /** A Beams publish's notification (the payloads of every platform). */
  beamsPublish: (instanceId: string, publishId: string) => `${segment(instanceId)}/beams-publish/${segment(publishId)}`,
  /** A Beams device's push address; without `registeredAt`, the prefix of every incarnation of the device id. */
  beamsDevice: (instanceId: string, deviceId: string, registeredAt?: string) => `${segment(instanceId)}/beams-device/${segment(deviceId)}@${registeredAt === undefined ? '' : segment(registeredAt)}`,
  /** A report's words: the reporter's reason and the moderator's note, each under a key of its own. */
  report: (instanceId: string, reportId: string) => `${segment(instanceId)}/report/${segment(reportId)}/`,
  /** Every key of a feed's items. */
  feed: (instanceId: string, feedId: string) => `${segment(instanceId)}/feed/${segment(feedId)}/`,
  /** The items of one publish to a feed, named by their first item id (ids never repeat in a feed). */
  feedItems: (instanceId: string, feedId: string, firstItemId: string) => `${dataKeyIds.feed(instanceId, feedId)}${segment(firstItemId)}`,
};

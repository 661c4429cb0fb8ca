import type { ParameterObject, SchemaObject } from '@nestjs/swagger';

const query = (name: string, schema: SchemaObject, description: string, required = false): ParameterObject => ({ name, in: 'query', required, schema, description });
const limit = (fallback: number, max: number) => query('limit', { type: 'integer', minimum: 1, maximum: max, default: fallback }, 'Page size');
const flag = (name: string, description: string) => query(name, { type: 'string', enum: ['true', 'false'], default: 'false' }, description);
const searchPage = (what: string) => [
  query('prefix', { type: 'string', maxLength: 200 }, `${what} whose id or name starts with this (case-sensitive; ids matching first, then names); absent: every one, by id`),
  query('after', { type: 'string' }, 'The `next` of the previous page'),
  limit(50, 100),
];
/** The console's pages of a room's messages and of a thread's replies. */
const consoleMessagePage = [
  query('before', { type: 'integer' }, 'Messages older than this id, newest first (the `next` of the previous page); absent and without `after`: the newest'),
  query('after', { type: 'integer' }, 'Messages newer than this id, oldest first (a live tail polls with the newest id it has)'),
  flag('content', 'Show the parts with their content; the read is recorded in the log (who, the room, which messages) before anything is answered'),
  limit(50, 100),
];
const auditPage = [query('from', { type: 'string' }, "The `next` position of the previous page"), limit(100, 1000)];

/**
 * The query parameters of operations whose controllers read the query untyped (`@Query()` as a
 * record, checked by hand), by operationId: the scanner cannot list those.
 */
export const QUERY_PARAMETERS: Readonly<Record<string, ParameterObject[]>> = {
  ListUsers_list: [query('from_ts', { type: 'string', format: 'date-time' }, 'Users created at or after this time'), limit(20, 100)],
  GetUsersByIds_get: [
    { ...query('id', { type: 'array', items: { type: 'string' } }, 'A user id; repeat it for more', true), style: 'form', explode: true },
  ],
  ListRooms_list: [query('from_id', { type: 'string' }, 'Rooms after this room id'), flag('include_private', 'Include private rooms (su tokens)')],
  ListUserRooms_list: [flag('joinable', "The public rooms the user could join, instead of the user's rooms")],
  FetchMessages_fetch: [
    query('initial_id', { type: 'integer' }, 'Start after this message id (exclusive)'),
    query('direction', { type: 'string', enum: ['older', 'newer'], default: 'older' }, 'older: newest first; newer: oldest first'),
    limit(20, 100),
  ],
  ListReplies_list: [
    query('initial_id', { type: 'integer' }, 'Start after this reply id (exclusive)'),
    query('direction', { type: 'string', enum: ['older', 'newer'], default: 'older' }, 'older: newest first; newer: oldest first'),
    limit(20, 100),
  ],
  ListUserThreads_list: [query('before', { type: 'integer' }, 'Threads whose latest reply is older than this (the `next` of the previous page)'), limit(20, 100)],
  ListReactions_list: [
    query('type', { type: 'string', maxLength: 32 }, 'Only reactions of this type'),
    query('after', { type: 'string' }, 'The `next` of the previous page'),
    limit(50, 100),
  ],
  ReviewReports_list: [
    query('status', { type: 'string', enum: ['open', 'resolved', 'all'], default: 'open' }, 'Which reports: open (the queue), resolved, or all'),
    query('after', { type: 'string' }, 'The `next` of the previous page'),
    limit(20, 100),
  ],
  RemoveUserRole_remove: [query('room_id', { type: 'string' }, "Remove the user's role in this room; absent: the global role")],
  IssueBeamsToken_issue: [query('user_id', { type: 'string' }, 'The user of the access token', true)],
  IssueTestToken_issue: [query('user_id', { type: 'string' }, 'The user to issue a token for (or in the body)')],
  ListItems_list: [query('cursor', { type: 'string' }, 'Items at or below this id (a previous page\'s `next_cursor`)'), limit(50, 1000)],
  ListFeeds_list: [query('prefix', { type: 'string' }, 'Feeds whose id starts with this'), limit(50, 1000)],
  AuditUser_audit: auditPage,
  AuditRoom_audit: auditPage,
  AuditActor_audit: auditPage,
  AuditMessage_audit: [
    ...auditPage,
    query('room_id', { type: 'string' }, "The message's room: needed only for a message of a deleted room that was never edited"),
  ],
  SearchUsers_search: searchPage('Users'),
  SearchRooms_search: searchPage('Rooms (private ones included)'),
  RoomMessages_list: consoleMessagePage,
  ThreadReplies_list: consoleMessagePage,
  RoomMembers_list: [query('after', { type: 'string' }, 'Members after this user id (the `next` of the previous page)'), limit(50, 100)],
  UserRooms_list: [query('after', { type: 'string' }, 'Rooms after this room id (the `next` of the previous page)'), limit(50, 100)],
  ReadCursors_ofRoom: [query('after', { type: 'string' }, 'Cursors after this user id (the `next` of the previous page)'), limit(50, 100)],
  ReadCursors_ofUser: [query('after', { type: 'string' }, 'Cursors after this room id (the `next` of the previous page)'), limit(50, 100)],
  FeedsByPrefix_list: [
    query('prefix', { type: 'string', maxLength: 200 }, 'Feeds whose id starts with this'),
    query('after', { type: 'string' }, 'Feeds after this id (the `next` of the previous page)'),
    limit(50, 100),
  ],
  BeamsUserDevices_list: [query('after', { type: 'string' }, 'Devices after this device id (the `next` of the previous page)'), limit(50, 100)],
  BeamsInterests_list: [
    query('prefix', { type: 'string', maxLength: 200 }, 'Interests that start with this'),
    query('after', { type: 'string' }, 'Interests after this one (the `next` of the previous page)'),
    limit(50, 100),
  ],
  ListDeliveries_list: [query('before', { type: 'string' }, 'Deliveries older than this one: the id of the last delivery of the previous page'), limit(50, 500)],
  SearchMessages_search: [
    query('q', { type: 'string', minLength: 1, maxLength: 256 }, 'The words to find, each in any case and with or without accents; "in quotes" for words in a row; CJK text is found as typed (at most 16 words or phrases)', true),
    query('room_ids', { type: 'string' }, 'Only these rooms, ids separated by commas (at most 100); rooms the caller is not a member of find nothing'),
    query('user_id', { type: 'string' }, 'Only messages this user sent'),
    query('from', { type: 'string', format: 'date-time' }, 'Only messages sent at or after this time'),
    query('to', { type: 'string', format: 'date-time' }, 'Only messages sent before this time'),
    flag('has_attachment', 'true: only messages with an attachment or a link part; false: only those without'),
    query('order', { type: 'string', enum: ['recent', 'relevance'], default: 'recent' }, 'recent: newest first; relevance: the newest 1,000 matches, best first (the words occurring most for the text\'s length)'),
    query('cursor', { type: 'string' }, 'The `next` of the previous page (of the same order)'),
    limit(20, 100),
  ],
  WebhookFeed_feed: [query('after', { type: 'string' }, 'Events after this log position (a previous page\'s `next`); absent: from the start of the log'), limit(100, 1000)],
};

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore } from '../../adapters/event-store/sqlite/sqlite-event-store';
import { SqliteReadModelStore } from '../../adapters/read-models/sqlite/sqlite-read-model-store';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { systemClock } from '../../shared/domain/clock';
import { documentId } from '../../shared/domain/streams';
import { DocumentChange } from '../../shared/ports/read-model-store.port';
import { notingQueries, sqlitePlans } from '../../../test/support/sqlite-query-plans';
import { beamsDevicesProjection, BEAMS_DEVICE_INTERESTS, BEAMS_DEVICES } from '../../../projections/beams/beams-devices.projection';
import { MESSAGES, messagesProjection } from '../../../projections/messages/messages.projection';
import { MEMBERSHIPS, membershipsProjection } from '../../../projections/rooms/memberships.projection';
import { READ_CURSORS, cursorsProjection } from '../../../projections/cursors/cursors.projection';
import { FEEDS, feedsProjection } from '../../../projections/feeds/feeds.projection';
import { FeedsReadModel } from '../feeds/feeds.read-model';
import { FeedsByPrefixController } from './feeds-by-prefix/feeds-by-prefix';
import { UserRoomsController } from './user-rooms/user-rooms';
import { ROOMS, roomsProjection } from '../../../projections/rooms/rooms.projection';
import { NAMES, namesProjection } from '../../../projections/search/names.projection';
import { MessagesReadModel } from '../messages/messages.read-model';
import { RoomsReadModel } from '../rooms/rooms.read-model';
import { BeamsInterestsController } from './beams-interests/beams-interests';
import { BeamsUserDevicesController } from './beams-user-devices/beams-user-devices';
import { ReadCursorsController } from './read-cursors/read-cursors';
import { RoomMembersController } from './room-members/room-members';
import { RoomMessagesController } from './room-messages/room-messages';
import { RoomSummaryController } from './room-summary/room-summary';
import { SearchRoomsController } from './search-rooms/search-rooms';
import { UserAndRoomSearch } from './user-and-room-search';
import { reactionsProjection } from '../../../projections/reactions/reactions.projection';
import { pinsProjection } from '../../../projections/pins/pins.projection';
import { THREAD_REPLIES, THREADS, threadsProjection } from '../../../projections/threads/threads.projection';
import { ThreadsReadModel } from '../threads/threads.read-model';
import { ConsoleMessagePage } from './console-message-page';
import { ThreadRepliesController } from './thread-replies/thread-replies';

/** The names read model is read here as it is: nothing is written meanwhile. */
const caughtUp: ReadYourWrites = { waitFor: async () => undefined };
const at = '2026-01-01T00:00:00.000Z';
const put = (collection: string, document: Record<string, unknown> & { _id: string }): DocumentChange => ({ collection, kind: 'put', document, position: '00000000000000000001' });

/**
 * Every read of the console routes on rooms, messages and Beams goes through an index range:
 * how SQLite plans each query the routes make on a filled read-models file.
 */
describe('console inspector reads (SQLite query plans)', () => {
  let dir: string;
  let readModels: SqliteReadModelStore;
  let events: SqliteEventStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-inspector-queries-'));
    readModels = new SqliteReadModelStore(join(dir, 'read-models.sqlite'));
    events = new SqliteEventStore(join(dir, 'events.sqlite'), { synchronous: 'NORMAL' });
    await readModels.ensureCollections([...[roomsProjection, membershipsProjection, messagesProjection, beamsDevicesProjection, namesProjection, cursorsProjection, feedsProjection, reactionsProjection, pinsProjection, threadsProjection].flatMap((p) => p.collections)]);
    const changes: DocumentChange[] = [];
    for (const room of ['r1', 'r2', 'r3']) {
      changes.push(put(ROOMS, { _id: documentId('i', room), instance_id: 'i', id: room, name: `Room ${room}`, private: room === 'r3', created_at: at, updated_at: at }));
      changes.push(put(NAMES, { _id: documentId('i', 'room', room), instance_id: 'i', kind: 'room', id: room, name_key: `room ${room}` }));
      for (const user of ['a', 'b', 'c']) {
        changes.push(put(MEMBERSHIPS, { _id: documentId('i', room, user), instance_id: 'i', room_id: room, user_id: user, joined_at: at }));
        changes.push(put(READ_CURSORS, { _id: documentId('i', room, user), instance_id: 'i', room_id: room, user_id: user, position: 1, updated_at: at }));
      }
    }
    for (let id = 1; id <= 5; id++) {
      changes.push(put(MESSAGES, { _id: documentId('i', 'r1', String(id)), instance_id: 'i', room_id: 'r1', id, user_id: 'a', parts: [{ type: 'text/plain', content: 'x' }], created_at: at, updated_at: at, visible: true }));
    }
    // Message 5 starts a thread of two replies.
    changes.push(put(THREADS, { _id: documentId('i', 'r1', '5'), instance_id: 'i', room_id: 'r1', parent_id: 5, reply_count: 2, last_reply_id: 7, last_reply_at: at, participants: ['a', 'b'] }));
    for (const id of [6, 7]) {
      changes.push(put(THREAD_REPLIES, { _id: documentId('i', 'r1', String(id)), instance_id: 'i', room_id: 'r1', id, parent_id: 5, user_id: 'b', parts: [{ type: 'text/plain', content: 'y' }], created_at: at, updated_at: at, visible: true }));
    }
    for (const [device, user, interests] of [['fcm-1', 'a', ['news', 'sport']], ['fcm-2', 'a', ['news']], ['fcm-3', null, ['weather']]] as const) {
      changes.push(put(BEAMS_DEVICES, { _id: documentId('i', device), instance_id: 'i', device_id: device, platform: 'fcm', subscription: { sealed: 'x' }, user_id: user }));
      for (const interest of interests) changes.push(put(BEAMS_DEVICE_INTERESTS, { _id: documentId('i', device, interest), instance_id: 'i', interest, device_id: device }));
    }
    for (const feed of ['news-a', 'news-b', 'sport']) {
      changes.push(put(FEEDS, { _id: documentId('i', feed), instance_id: 'i', feed_id: feed, item_count: 1, next_seq: 2 }));
    }
    await readModels.applyBatch(changes, {});
  });
  afterAll(async () => {
    await readModels.close();
    await events.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("rooms by prefix with their member counts, a page of messages and of a thread's replies, a Beams user devices and the interests with their counts", async () => {
    const { store, queries } = notingQueries(readModels);
    const pipeline = new CommandPipeline(events, caughtUp);
    const rooms = new SearchRoomsController(store, new UserAndRoomSearch(store, events, caughtUp));
    expect((await rooms.search('i', { prefix: 'room', limit: '2' })).rooms.map((r) => [r.id, r.member_count])).toEqual([
      ['r1', 3],
      ['r2', 3],
    ]);
    expect((await rooms.search('i', {})).rooms).toHaveLength(3);
    const pages = new ConsoleMessagePage(pipeline, new ThreadsReadModel(store), systemClock, store);
    const messages = new RoomMessagesController(new RoomsReadModel(store, caughtUp), new MessagesReadModel(store, caughtUp), pages);
    const actor = { instanceId: 'i', keyId: 'k', su: true };
    const newest = (await messages.list('i', 'r1', { limit: '2' }, actor)).messages;
    expect(newest.map((m) => [m.id, m.thread?.reply_count])).toEqual([
      [5, 2],
      [4, undefined],
    ]);
    expect((await messages.list('i', 'r1', { after: '3' }, actor)).messages.map((m) => m.id)).toEqual([4, 5]);
    const replies = new ThreadRepliesController(new RoomsReadModel(store, caughtUp), new MessagesReadModel(store, caughtUp), new ThreadsReadModel(store), pages);
    expect((await replies.list('i', 'r1', '5', { limit: '1' }, actor)).messages.map((m) => m.id)).toEqual([7]);
    expect((await replies.list('i', 'r1', '5', { after: '6' }, actor)).messages.map((m) => m.id)).toEqual([7]);
    const devices = new BeamsUserDevicesController(store, pipeline);
    expect((await devices.list('i', 'a', { limit: '1', after: 'fcm-1' })).devices.map((d) => d.id)).toEqual(['fcm-2']);
    const interests = new BeamsInterestsController(store);
    expect((await interests.list('i', {})).interests).toEqual([
      { name: 'news', subscriber_count: 2 },
      { name: 'sport', subscriber_count: 1 },
      { name: 'weather', subscriber_count: 1 },
    ]);
    expect((await interests.list('i', { prefix: 'sp' })).interests.map((i) => i.name)).toEqual(['sport']);

    const plans = sqlitePlans(join(dir, 'read-models.sqlite'), queries);
    expect(plans.length).toBeGreaterThan(15);
    for (const plan of plans) expect(plan).toMatch(/^SEARCH rm_\w+ USING (COVERING )?INDEX ix_/);
    // An `in` list is read through json_each (the page's message ids), each id an index search.
    for (const plan of plans) expect(plan).not.toMatch(/TEMP B-TREE|SCAN (?!json_each)/);
  });

  it("a room with its member count, its members and read cursors, a user's rooms and read cursors, Feeds, a page at a time", async () => {
    const { store, queries } = notingQueries(readModels);
    const rooms = new RoomsReadModel(store, caughtUp);
    expect((await new RoomSummaryController(rooms, store).get('i', 'r1')).member_count).toBe(3);
    const members = new RoomMembersController(rooms, store);
    expect(await members.list('i', 'r1', { limit: '2' })).toEqual({ members: [{ user_id: 'a', joined_at: at }, { user_id: 'b', joined_at: at }], next: 'b' });
    expect((await members.list('i', 'r1', { after: 'b' })).members.map((m) => m.user_id)).toEqual(['c']);
    const cursors = new ReadCursorsController(rooms, store);
    expect((await cursors.ofRoom('i', 'r2', { after: 'a', limit: '1' })).cursors.map((c) => c.user_id)).toEqual(['b']);
    expect((await cursors.ofUser('i', 'c', { after: 'r1' })).cursors.map((c) => c.room_id)).toEqual(['r2', 'r3']);

    const userRooms = new UserRoomsController(store);
    expect(await userRooms.list('i', 'a', { limit: '2' })).toEqual({ rooms: [{ id: 'r1', name: 'Room r1', private: false, joined_at: at }, { id: 'r2', name: 'Room r2', private: false, joined_at: at }], next: 'r2' });
    expect((await userRooms.list('i', 'a', { after: 'r2' })).rooms.map((r) => r.id)).toEqual(['r3']);
    const feeds = new FeedsByPrefixController(new FeedsReadModel(store));
    expect(await feeds.list('i', { prefix: 'news', limit: '1' })).toEqual({ feeds: [{ id: 'news-a', item_count: 1 }], next: 'news-a' });
    expect((await feeds.list('i', { after: 'news-b' })).feeds.map((f) => f.id)).toEqual(['sport']);

    const plans = sqlitePlans(join(dir, 'read-models.sqlite'), queries);
    expect(plans).toHaveLength(9);
    for (const plan of plans) expect(plan).toMatch(/^SEARCH rm_\w+ USING (COVERING )?INDEX ix_/);
    for (const plan of plans) expect(plan).not.toMatch(/TEMP B-TREE|SCAN/);
  });
});

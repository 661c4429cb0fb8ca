import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { READ_YOUR_WRITES, ReadYourWrites } from '../../shared/application/write-path/read-your-writes';
import { readAfterWrites } from '../../shared/application/write-path/read-after-writes';
import { MESSAGE_READS } from '../messages/messages.read-model';
import { ROOMS, RoomDocument, roomDocumentId } from '../../../projections/rooms/rooms.projection';
import { MEMBERSHIPS, MembershipDocument } from '../../../projections/rooms/memberships.projection';
import { MESSAGES } from '../../../projections/messages/messages.projection';
import { READ_CURSORS, ReadCursorDocument } from '../../../projections/cursors/cursors.projection';
import { roomNotFound } from './domain/room.decider';

export interface RoomWithMembers {
  readonly room: RoomDocument;
  readonly memberIds: string[];
  /** Unread messages of the user the rooms were listed for, if any. */
  readonly unreadCount?: number;
}

/** Reads of the rooms and memberships read models. */
@Injectable()
export class RoomsReadModel {
  constructor(
    @Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore,
    @Inject(READ_YOUR_WRITES) private readonly readYourWrites: ReadYourWrites,
  ) {}

  find(instanceId: string, roomId: string): Promise<RoomDocument | null> {
    return this.readModels.get<RoomDocument>(ROOMS, roomDocumentId(instanceId, roomId));
  }

  async get(instanceId: string, roomId: string): Promise<RoomDocument> {
    const room = await this.find(instanceId, roomId);
    if (!room) throw roomNotFound(roomId);
    return room;
  }

  /** Member ids in the order they joined. */
  async memberIds(instanceId: string, roomId: string): Promise<string[]> {
    const docs = await this.readModels.find<MembershipDocument>(MEMBERSHIPS, {
      where: { instance_id: instanceId, room_id: roomId },
      sort: [{ field: 'joined_at' }, { field: 'user_id' }],
    });
    return docs.map((d) => d.user_id);
  }

  /** Each room with its member ids and, when `viewerId` is given, that user's unread count. */
  async withMembers(rooms: readonly RoomDocument[], viewerId?: string): Promise<RoomWithMembers[]> {
    const unread =
      viewerId !== undefined && rooms.length
        ? await this.unreadCounts(rooms[0].instance_id, viewerId, rooms.map((r) => r.id))
        : undefined;
    return Promise.all(
      rooms.map(async (room) => ({
        room,
        memberIds: await this.memberIds(room.instance_id, room.id),
        ...(unread && { unreadCount: unread.get(room.id) ?? 0 }),
      })),
    );
  }

  /** The rooms a user is a member of, by room id. */
  async roomsOf(instanceId: string, userId: string): Promise<RoomDocument[]> {
    const memberships = await this.readModels.find<MembershipDocument>(MEMBERSHIPS, {
      where: { instance_id: instanceId, user_id: userId },
    });
    const rooms = await this.readModels.getMany<RoomDocument>(
      ROOMS,
      memberships.map((m) => roomDocumentId(instanceId, m.room_id)),
    );
    return rooms.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Rooms by id after `afterId` (exclusive); private ones only when asked. */
  list(instanceId: string, afterId: string | undefined, includePrivate: boolean, limit: number): Promise<RoomDocument[]> {
    return this.readModels.find<RoomDocument>(ROOMS, {
      where: {
        instance_id: instanceId,
        ...(!includePrivate && { private: false }),
        ...(afterId !== undefined && { id: { gt: afterId } }),
      },
      sort: [{ field: 'id' }],
      limit,
    });
  }

  /**
   * Per room, the messages a user has not read: those after the user's read cursor (all of
   * them without one).
   */
  async unreadCounts(instanceId: string, userId: string, roomIds: readonly string[]): Promise<Map<string, number>> {
    // Counted from the messages read model, which a send may leave to its readers (readAfterWrites).
    await readAfterWrites(this.readYourWrites, MESSAGE_READS);
    const cursors = await this.readModels.find<ReadCursorDocument>(READ_CURSORS, {
      where: { instance_id: instanceId, user_id: userId },
    });
    const read = new Map(cursors.map((c) => [c.room_id, c.position]));
    const counts = await Promise.all(
      roomIds.map((roomId) =>
        this.readModels.count(MESSAGES, {
          instance_id: instanceId,
          room_id: roomId,
          visible: true,
          id: { gt: read.get(roomId) ?? 0 },
        }),
      ),
    );
    return new Map(roomIds.map((id, i) => [id, counts[i]]));
  }
}

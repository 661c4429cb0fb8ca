import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { ROOMS, RoomDocument, roomDocumentId } from '../../../projections/rooms/rooms.projection';
import { MEMBERSHIPS, MembershipDocument } from '../../../projections/rooms/memberships.projection';
import { roomNotFound } from './domain/room.decider';

export interface RoomWithMembers {
  readonly room: RoomDocument;
  readonly memberIds: string[];
}

/** Reads of the rooms and memberships read models. */
@Injectable()
export class RoomsReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

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

  async withMembers(rooms: readonly RoomDocument[]): Promise<RoomWithMembers[]> {
    return Promise.all(rooms.map(async (room) => ({ room, memberIds: await this.memberIds(room.instance_id, room.id) })));
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

  async isMember(instanceId: string, roomId: string, userId: string): Promise<boolean> {
    return (await this.memberIds(instanceId, roomId)).includes(userId);
  }
}

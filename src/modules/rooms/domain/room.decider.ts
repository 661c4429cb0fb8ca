import { Decider } from '../../../shared/domain/decider';
import { badRequest, forbidden, notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { JsonObject, RoomEvent, RoomMember } from './room.events';

export const roomStream = (instanceId: string, roomId: string) => streamName('room', instanceId, roomId);

export interface RoomState {
  readonly exists: boolean;
  /** Tells apart a room from an earlier room of the same id that was deleted. */
  readonly createdAt?: string;
  readonly private: boolean;
  readonly createdById?: string;
  /** user id → the `created_at` of the user that joined. */
  readonly members: ReadonlyMap<string, string>;
}

export type RoomCommand =
  | {
      type: 'CreateRoom';
      id: string;
      name: string;
      private: boolean;
      created_by?: RoomMember;
      members: RoomMember[];
      custom_data?: JsonObject;
      push_notification_title_override?: string;
      now: string;
    }
  | {
      type: 'UpdateRoom';
      id: string;
      name?: string;
      private?: boolean;
      custom_data?: JsonObject;
      push_notification_title_override?: string | null;
      now: string;
    }
  | { type: 'DeleteRoom'; id: string; now: string }
  /** `join` is a user acting for themselves: a private room only admits existing members. */
  | { type: 'AddMembers'; id: string; members: RoomMember[]; join: boolean; su: boolean; now: string }
  /** `leave`: a user leaving by themselves (recorded, so webhooks tell a leave from a removal). */
  | { type: 'RemoveMembers'; id: string; user_ids: string[]; leave?: boolean; now: string };

export const roomNotFound = (id: string) => notFound('room_not_found', `The room "${id}" does not exist`);

export const isMember = (state: RoomState, member: RoomMember): boolean =>
  state.members.get(member.user_id) === member.user_created_at;

export const roomDecider: Decider<RoomState, RoomCommand, RoomEvent> = {
  initialState: () => ({ exists: false, private: false, members: new Map() }),

  evolve(state, event) {
    switch (event.type) {
      case 'RoomCreated':
        return {
          exists: true,
          createdAt: event.data.created_at,
          private: event.data.private,
          createdById: event.data.created_by_id,
          members: new Map(),
        };
      case 'RoomUpdated':
        return event.data.private === undefined ? state : { ...state, private: event.data.private };
      case 'RoomDeleted':
        return roomDecider.initialState();
      case 'RoomMembersAdded': {
        const members = new Map(state.members);
        for (const m of event.data.members) members.set(m.user_id, m.user_created_at);
        return { ...state, members };
      }
      case 'RoomMembersRemoved': {
        const members = new Map(state.members);
        for (const id of event.data.user_ids) members.delete(id);
        return { ...state, members };
      }
    }
  },

  decide(command, state) {
    if (command.type === 'CreateRoom') {
      if (state.exists) {
        throw badRequest('room_already_exists', `A room with id "${command.id}" already exists`);
      }
      const { id, name, custom_data, push_notification_title_override, now } = command;
      const members = dedupe([...(command.created_by ? [command.created_by] : []), ...command.members]);
      const events: RoomEvent[] = [
        {
          type: 'RoomCreated',
          data: {
            id,
            name,
            private: command.private,
            created_by_id: command.created_by?.user_id,
            custom_data,
            push_notification_title_override,
            created_at: now,
          },
        },
      ];
      if (members.length) events.push({ type: 'RoomMembersAdded', data: { members, added_at: now } });
      return events;
    }
    if (!state.exists) throw roomNotFound(command.id);
    switch (command.type) {
      case 'UpdateRoom': {
        const { name, custom_data, push_notification_title_override, now } = command;
        return [
          {
            type: 'RoomUpdated',
            data: { name, private: command.private, custom_data, push_notification_title_override, updated_at: now, room_created_at: state.createdAt },
          },
        ];
      }
      case 'DeleteRoom':
        return [{ type: 'RoomDeleted', data: { deleted_at: command.now } }];
      case 'AddMembers': {
        const members = dedupe(command.members).filter((m) => !isMember(state, m));
        if (members.length === 0) return [];
        if (command.join && state.private && !command.su) {
          throw forbidden('room_is_private', `The room "${command.id}" is private: only its members can enter it`);
        }
        return [{ type: 'RoomMembersAdded', data: { members, added_at: command.now } }];
      }
      case 'RemoveMembers': {
        const user_ids = [...new Set(command.user_ids)].filter((u) => state.members.has(u));
        if (user_ids.length === 0) return [];
        return [{ type: 'RoomMembersRemoved', data: { user_ids, removed_at: command.now, ...(command.leave && { left: true as const }) } }];
      }
    }
  },
};

const dedupe = (members: RoomMember[]): RoomMember[] => {
  const seen = new Map<string, RoomMember>();
  for (const m of members) seen.set(m.user_id, m);
  return [...seen.values()];
};

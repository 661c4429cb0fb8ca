import { Decider } from '../../../shared/domain/decider';
import { DomainError, notFound } from '../../../shared/domain/errors';
import { streamName } from '../../../shared/domain/streams';
import { JsonObject, UserEvent } from './user.events';

export const userStream = (instanceId: string, userId: string) => streamName('user', instanceId, userId);

export interface UserState {
  readonly exists: boolean;
  /** Tells apart a user from an earlier user of the same id that was deleted. */
  readonly createdAt: string | null;
  /** When a user of this id was last deleted: tokens issued before it no longer act for anyone. */
  readonly deletedAt: string | null;
  /** The data key the user's profile is sealed with (`UserCreated.profile_key`), or null for a user created before profiles were sealed. */
  readonly profileKey: string | null;
  /** The latest incarnation, existing or deleted since: what an erasure of the id erases (a deleted user's messages stay). */
  readonly latestCreatedAt: string | null;
}

export type UserCommand =
  | { type: 'CreateUser'; id: string; name: string; avatar_url?: string; custom_data?: JsonObject; now: string; profile_key?: string }
  | { type: 'UpdateUser'; id: string; name?: string; avatar_url?: string; custom_data?: JsonObject; now: string }
  /** `incarnation`: delete only the user created at that time (an erasure of one person must not reach a user created again with the id). */
  | { type: 'DeleteUser'; id: string; now: string; incarnation?: string };

// "user does not exist" is what chatkit-client tests look for when connecting as an unknown user.
export const userNotFound = (id: string) => notFound('user_not_found', `The user does not exist: "${id}"`);

/** What an update or a delete names of the user it concerns: the incarnation, and its profile key when the creation named one. */
const incarnationOf = (state: UserState) => ({ user_created_at: state.createdAt ?? undefined, ...(state.profileKey ? { profile_key: state.profileKey } : {}) });

export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  initialState: () => ({ exists: false, createdAt: null, deletedAt: null, profileKey: null, latestCreatedAt: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'UserCreated':
        return { ...state, exists: true, createdAt: event.data.created_at, profileKey: event.data.profile_key ?? null, latestCreatedAt: event.data.created_at };
      case 'UserDeleted':
        return { ...state, exists: false, createdAt: null, deletedAt: event.data.deleted_at, profileKey: null };
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateUser': {
        if (state.exists) {
          // Apps still compare against the historical string, so it is kept as it was.
          throw new DomainError('bad_request', 'user_already_exists', `A user with id "${command.id}" already exists`, {
            code: 'user_already_exists',
          });
        }
        const { id, name, avatar_url, custom_data, now, profile_key } = command;
        return [{ type: 'UserCreated', data: { id, name, avatar_url, custom_data, created_at: now, profile_key } }];
      }
      case 'UpdateUser': {
        if (!state.exists) throw userNotFound(command.id);
        const { name, avatar_url, custom_data, now } = command;
        return [{ type: 'UserUpdated', data: { name, avatar_url, custom_data, updated_at: now, ...incarnationOf(state) } }];
      }
      case 'DeleteUser':
        if (!state.exists || (command.incarnation !== undefined && command.incarnation !== state.createdAt)) throw userNotFound(command.id);
        return [{ type: 'UserDeleted', data: { deleted_at: command.now, ...incarnationOf(state) } }];
    }
  },
};

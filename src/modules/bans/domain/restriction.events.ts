import { DomainEvent } from '../../../shared/domain/event';

/**
 * Where a ban holds: one room (of one incarnation: a room created again with the same id starts
 * without the bans of the one before), or the whole instance.
 */
export type BanScope = { room_id: string; room_created_at: string } | { room_id?: undefined; room_created_at?: undefined };

/**
 * A user banned (again: its reason, end or shadowing changed), on the room's restrictions stream
 * (`restrictions-<instance>.room.<room>`) or the instance's (`restrictions-<instance>.instance`).
 * `user_created_at`: the incarnation banned (a later user of the same id is someone else).
 * `reason` is what a moderator wrote about a person: sealed in the log (`restriction.personal-data.ts`).
 * `shadow`: the user's writes succeed, and what they send is shown to nobody but them.
 */
export type UserBanned = DomainEvent<
  'UserBanned',
  BanScope & { user_id: string; user_created_at: string; reason: string; shadow: boolean; banned_by?: string; banned_at: string; until?: string }
>;
export type UserUnbanned = DomainEvent<'UserUnbanned', BanScope & { user_id: string; user_created_at: string; unbanned_at: string }>;

/** A room made read only (`frozen_by`: absent for su), and made writable again. Ids and times only. */
export type RoomFrozen = DomainEvent<'RoomFrozen', { room_id: string; room_created_at: string; frozen_by?: string; frozen_at: string }>;
export type RoomUnfrozen = DomainEvent<'RoomUnfrozen', { room_id: string; room_created_at: string; unfrozen_at: string }>;

export type RestrictionEvent = UserBanned | UserUnbanned | RoomFrozen | RoomUnfrozen;

import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { forbidden } from '../../shared/domain/errors';
import { parseStreamName } from '../../shared/domain/streams';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { roomDecider, roomStream } from '../rooms/domain/room.decider';
import { userDecider, userStream } from '../users/domain/user.decider';
import { Ban, instanceRestrictionsStream, isFrozen, restrictionsDecider, roomRestrictionsStream, standingBan } from './domain/restrictions.decider';

/** Who acts, as restrictions see it (an access token's caller). */
export interface RestrictedCaller {
  readonly instanceId: string;
  readonly userId?: string;
  readonly su: boolean;
}

/**
 * What a route does to a room, as restrictions see it: `write` is any call that changes
 * something (every method but GET and HEAD), `subscribe` a subscription that stays open.
 */
export type RestrictedAction = 'write' | 'subscribe';

const LEAVE_ROOM = 'POST /services/chatkit/:version/:instanceId/users/:userId/rooms/:roomId/leave';
const ROOM_MODERATION = ['PUT', 'DELETE'].flatMap((method) =>
  ['rooms/:roomId/bans/:userId', 'rooms/:roomId/freeze'].map((path) => `${method} /services/chatkit/v6/:instanceId/${path}`),
);

/**
 * Routes a banned user may still call, as the HTTP server names them: leaving the room, so that
 * nobody is kept in a room they cannot write to.
 */
export const ALLOWED_WHEN_BANNED: ReadonlySet<string> = new Set([LEAVE_ROOM]);
/** Writes a frozen room still takes: leaving it, and its moderation (banning, unfreezing). */
export const ALLOWED_WHEN_FROZEN: ReadonlySet<string> = new Set([LEAVE_ROOM, ...ROOM_MODERATION]);

const RESTRICTION_CHANGES = 'parley:restriction-changes';

/** What the check found of a call it lets through. */
export interface RestrictionOutcome {
  /** The caller is shadow banned (in the instance, or in the room the route names). */
  readonly shadow: boolean;
}
const UNRESTRICTED: RestrictionOutcome = { shadow: false };

export const banned = (ban: Ban, roomId: string | undefined) =>
  forbidden(
    'banned',
    `${roomId === undefined ? 'The user is banned from this instance' : `The user is banned from the room "${roomId}"`}` +
      `${ban.until === undefined ? ' with no end' : ` until ${ban.until}`}`,
  );

export const roomFrozen = (roomId: string) => forbidden('room_frozen', `The room "${roomId}" is frozen: it is read only until it is unfrozen`);

/**
 * The one check of bans and frozen rooms, for every route (`AccessCheck` calls it after the
 * route's own rule): a room route (one naming `:roomId`) refuses a user banned from the room or
 * the instance, and a write to a frozen room; any other write refuses a user banned from the
 * instance. su is never restricted. A shadow ban refuses nothing: its user must not notice it
 * (what they send is shown to nobody else, `shadowed`). Decided on write-side state (the
 * command pipeline's state cache), with the clock now: a ban ends by itself at its `until`.
 */
@Injectable()
export class Restrictions implements OnModuleInit, OnModuleDestroy {
  private readonly watchers = new Map<string, Set<() => void>>();
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly liveLog: LiveLog,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.liveLog.addRouter((event) => (event.type === 'UserBanned' || event.type === 'UserUnbanned' ? [RESTRICTION_CHANGES] : []));
    this.stopListening = this.liveLog.on(RESTRICTION_CHANGES, (event) => {
      const parsed = parseStreamName(event.streamName);
      const userId = (event.data as { user_id?: unknown }).user_id;
      if (parsed && typeof userId === 'string') for (const onChange of [...(this.watchers.get(watchKey(parsed.instanceId, userId)) ?? [])]) onChange();
    });
  }

  onModuleDestroy(): void {
    this.stopListening?.();
  }

  /**
   * Throws the 403 (`banned`, `room_frozen`) the caller gets, or says whether the call is made
   * under a shadow ban (of the instance, or of the room the route names): what it sends then
   * shows to its sender alone.
   */
  async enforce(caller: RestrictedCaller, roomId: string | undefined, action: RestrictedAction, route: string): Promise<RestrictionOutcome> {
    if (caller.su || caller.userId === undefined) return UNRESTRICTED;
    const bansApply = !ALLOWED_WHEN_BANNED.has(route);
    const userId = caller.userId;
    const now = this.clock.now().toISOString();
    const { state: user } = await this.pipeline.load(userStream(caller.instanceId, userId), userDecider);
    if (!user.exists) return UNRESTRICTED;
    let shadow = false;
    if (action === 'write' || roomId !== undefined) {
      const { state: instance } = await this.pipeline.load(instanceRestrictionsStream(caller.instanceId), restrictionsDecider);
      const ban = standingBan(instance, userId, user.createdAt, undefined, now);
      if (bansApply && ban && !ban.shadow) throw banned(ban, undefined);
      shadow = ban?.shadow === true;
    }
    if (roomId === undefined) return { shadow };
    const { state: room } = await this.pipeline.load(roomStream(caller.instanceId, roomId), roomDecider);
    if (!room.exists) return { shadow };
    const { state } = await this.pipeline.load(roomRestrictionsStream(caller.instanceId, roomId), restrictionsDecider);
    const ban = standingBan(state, userId, user.createdAt, room.createdAt, now);
    if (bansApply && ban && !ban.shadow) throw banned(ban, roomId);
    if (action === 'write' && !ALLOWED_WHEN_FROZEN.has(route) && isFrozen(state, room.createdAt!)) throw roomFrozen(roomId);
    return { shadow: shadow || ban?.shadow === true };
  }

  /** Whether what the user sends to the room now is shown to them alone (a shadow ban of the room or the instance). */
  async shadowed(instanceId: string, roomId: string, userId: string, userCreatedAt: string, roomCreatedAt: string): Promise<boolean> {
    const now = this.clock.now().toISOString();
    const [instance, room] = await Promise.all([
      this.pipeline.load(instanceRestrictionsStream(instanceId), restrictionsDecider),
      this.pipeline.load(roomRestrictionsStream(instanceId, roomId), restrictionsDecider),
    ]);
    return (
      standingBan(instance.state, userId, userCreatedAt, undefined, now)?.shadow === true ||
      standingBan(room.state, userId, userCreatedAt, roomCreatedAt, now)?.shadow === true
    );
  }

  /**
   * The caller's user id when a shadow ban of theirs stands in the room now (reads then show them
   * their own messages sent under it), else undefined.
   */
  async shadowViewer(caller: RestrictedCaller, roomId: string): Promise<string | undefined> {
    if (caller.su || caller.userId === undefined) return undefined;
    const [user, room] = await Promise.all([
      this.pipeline.load(userStream(caller.instanceId, caller.userId), userDecider),
      this.pipeline.load(roomStream(caller.instanceId, roomId), roomDecider),
    ]);
    if (!user.state.exists || !room.state.exists) return undefined;
    return (await this.shadowed(caller.instanceId, roomId, caller.userId, user.state.createdAt!, room.state.createdAt!)) ? caller.userId : undefined;
  }

  /** Of `roomIds`, the rooms the user is banned from now (shadow bans aside: those must not show). */
  async bannedFrom(instanceId: string, userId: string, roomIds: readonly string[]): Promise<Set<string>> {
    const now = this.clock.now().toISOString();
    const { state: user } = await this.pipeline.load(userStream(instanceId, userId), userDecider);
    const banned = await Promise.all(
      roomIds.map(async (roomId) => {
        const [room, restrictions] = await Promise.all([
          this.pipeline.load(roomStream(instanceId, roomId), roomDecider),
          this.pipeline.load(roomRestrictionsStream(instanceId, roomId), restrictionsDecider),
        ]);
        const ban = room.state.exists ? standingBan(restrictions.state, userId, user.createdAt, room.state.createdAt, now) : undefined;
        return ban !== undefined && !ban.shadow;
      }),
    );
    return new Set(roomIds.filter((_, i) => banned[i]));
  }

  /** Calls `onChange` after every ban or unban of the user (here, or by another process); returns the removal. */
  watch(instanceId: string, userId: string, onChange: () => void): () => void {
    const key = watchKey(instanceId, userId);
    let set = this.watchers.get(key);
    if (!set) this.watchers.set(key, (set = new Set()));
    set.add(onChange);
    return () => {
      set!.delete(onChange);
      if (set!.size === 0 && this.watchers.get(key) === set) this.watchers.delete(key);
    };
  }
}

const watchKey = (instanceId: string, userId: string) => JSON.stringify([instanceId, userId]);

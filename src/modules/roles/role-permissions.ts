import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { growingLru } from '../../shared/growing-lru';
import { CommandPipeline } from '../../shared/application/write-path/command-pipeline';
import { forbidden } from '../../shared/domain/errors';
import { INSTANCE_WIPED } from '../../shared/domain/instance-wipe';
import { parseStreamName } from '../../shared/domain/streams';
import { LiveLog } from '../../shared/subscriptions/live-log';
import { RequestActor } from '../instances/authentication/access-token';
import { rolesDecider, RolesState, rolesStream } from './domain/roles.decider';
import { compilePermissions, forIncarnation, liveRole, userRolesDecider, UserRolesState, userRolesStream } from './domain/user-roles.decider';
import { userDecider, userStream } from '../users/domain/user.decider';

/** Instances whose role catalogue is kept folded in memory. */
const CATALOGUES_CACHED = 1_000;
/** Users whose permissions are kept compiled (least recently used go first). */
const USERS_CACHED = 50_000;
/** Routing key the live log hands every role event under. */
const ROLE_EVENTS = '$role-events';
/** Routing key of users' creations and deletions. */
const USER_INCARNATIONS = '$user-incarnations';
/** Routing key of instance wipes (they end every role and assignment of the instance). */
const WIPES = '$role-wipes';

interface CompiledUser {
  readonly catalogue: RolesState;
  readonly user: UserRolesState;
  readonly global: Set<string>;
  readonly rooms: Map<string, Set<string>>;
}

export const missingPermission = (permission: string, roomId?: string) =>
  forbidden(
    'missing_permission',
    `The user lacks the permission "${permission}"${roomId !== undefined ? ` for the room "${roomId}"` : ''}`,
  );

/**
 * What a user may do, compiled per instance and user and kept in memory: a check on a warm
 * cache is two map lookups and a set test, no store read. Role events (from this process at
 * once, from others through the live log) drop what they change; the next check folds the
 * stream again from where the command pipeline's state cache left it. Open subscriptions
 * watch their user and are re-checked on every change that may concern them.
 */
@Injectable()
export class RolePermissions implements OnModuleInit, OnModuleDestroy {
  private readonly catalogues = growingLru<string, RolesState>(CATALOGUES_CACHED);
  private readonly users = growingLru<string, CompiledUser>(USERS_CACHED);
  /** Bumped by each invalidation, so a load that raced one is not cached. */
  private generation = 0;
  private readonly watchers = new Map<string, Map<string, Set<() => void>>>();
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly liveLog: LiveLog,
  ) {}

  onModuleInit(): void {
    this.liveLog.addRouter((event) =>
      event.streamName.startsWith('roles-') || event.streamName.startsWith('userroles-') ? [ROLE_EVENTS] : [],
    );
    // A user created or deleted changes which of its assignments count.
    this.liveLog.addRouter((event) => (event.type === 'UserCreated' || event.type === 'UserDeleted' ? [USER_INCARNATIONS] : []));
    const offRoles = this.liveLog.on(ROLE_EVENTS, (event) => this.changed(event.streamName));
    const offUsers = this.liveLog.on(USER_INCARNATIONS, (event) => {
      const user = parseStreamName(event.streamName);
      if (user) this.changed(userRolesStream(user.instanceId, user.id));
    });
    this.liveLog.addRouter((event) => (event.type === INSTANCE_WIPED ? [WIPES] : []));
    const offWipes = this.liveLog.on(WIPES, (event) => {
      const wiped = parseStreamName(event.streamName);
      if (wiped) this.wiped(wiped.instanceId);
    });
    this.stopListening = () => {
      offRoles();
      offUsers();
      offWipes();
    };
  }

  onModuleDestroy(): void {
    this.stopListening?.();
  }

  /** Throws 403 `forbidden/missing_permission` unless `actor` holds `permission` (in `roomId`, when given). su holds all. */
  async require(actor: RequestActor, permission: string, roomId?: string): Promise<void> {
    if (actor.su) return;
    if (!(await this.holds(actor.instanceId, actor.userId, permission, roomId))) throw missingPermission(permission, roomId);
  }

  async holds(instanceId: string, userId: string | undefined, permission: string, roomId?: string): Promise<boolean> {
    const compiled = await this.compiled(instanceId, userId ?? '');
    if (roomId === undefined) return compiled.global.has(permission);
    let inRoom = compiled.rooms.get(roomId);
    if (!inRoom) compiled.rooms.set(roomId, (inRoom = compilePermissions(compiled.catalogue, compiled.user, roomId)));
    return inRoom.has(permission);
  }

  /** Whether the user holds a role scoped to the room (one that still exists). */
  async hasRoomRole(instanceId: string, userId: string, roomId: string): Promise<boolean> {
    const compiled = await this.compiled(instanceId, userId);
    return liveRole(compiled.catalogue, compiled.user.rooms.get(roomId), true) !== null;
  }

  /** The instance's roles as of the log now (a store read: for the authorizer's own routes). */
  async catalogue(instanceId: string): Promise<RolesState> {
    const generation = this.generation;
    const { state } = await this.pipeline.load(rolesStream(instanceId), rolesDecider);
    if (generation === this.generation) this.catalogues.set(instanceId, state);
    return state;
  }

  /** The user's role assignments that belong to it as it exists now (not to a deleted user of the same id). */
  async userRoles(instanceId: string, userId: string): Promise<UserRolesState> {
    const [roles, user] = await Promise.all([
      this.pipeline.load(userRolesStream(instanceId, userId), userRolesDecider),
      this.pipeline.load(userStream(instanceId, userId), userDecider),
    ]);
    return forIncarnation(roles.state, user.state.createdAt);
  }

  /** Calls `onChange` after every role change that may concern the user; returns the removal. */
  watch(instanceId: string, userId: string, onChange: () => void): () => void {
    let byUser = this.watchers.get(instanceId);
    if (!byUser) this.watchers.set(instanceId, (byUser = new Map()));
    let set = byUser.get(userId);
    if (!set) byUser.set(userId, (set = new Set()));
    set.add(onChange);
    return () => {
      set!.delete(onChange);
      if (set!.size === 0 && byUser!.get(userId) === set) byUser!.delete(userId);
      if (byUser!.size === 0 && this.watchers.get(instanceId) === byUser) this.watchers.delete(instanceId);
    };
  }

  /** A role stream was written (here, or by another process): drop what it compiled, tell the watchers. */
  changed(stream: string): void {
    const parsed = parseStreamName(stream);
    if (!parsed) return;
    this.generation++;
    const byUser = this.watchers.get(parsed.instanceId);
    if (parsed.category === 'roles') {
      this.catalogues.delete(parsed.instanceId);
      for (const set of byUser?.values() ?? []) for (const onChange of [...set]) onChange();
    } else if (parsed.category === 'userroles') {
      this.users.delete(userKey(parsed.instanceId, parsed.id));
      for (const onChange of [...(byUser?.get(parsed.id) ?? [])]) onChange();
    }
  }

  /**
   * The instance was wiped (here, or by another process): what was compiled from its roles and
   * assignments is dropped, and its open subscriptions are checked again.
   */
  wiped(instanceId: string): void {
    const prefix = userKey(instanceId, '');
    for (const key of [...this.users.keys()]) if (key.startsWith(prefix)) this.users.delete(key);
    this.changed(rolesStream(instanceId));
  }

  private async compiled(instanceId: string, userId: string): Promise<CompiledUser> {
    const key = userKey(instanceId, userId);
    const cached = this.users.get(key);
    const catalogue = this.catalogues.get(instanceId);
    if (cached && cached.catalogue === catalogue) return cached;
    const generation = this.generation;
    const [current, user] = await Promise.all([
      catalogue ?? this.catalogue(instanceId),
      cached?.user ?? (userId === '' ? userRolesDecider.initialState() : this.userRoles(instanceId, userId)),
    ]);
    const compiled: CompiledUser = { catalogue: current, user, global: compilePermissions(current, user), rooms: new Map() };
    if (generation === this.generation) this.users.set(key, compiled);
    return compiled;
  }
}

const userKey = (instanceId: string, userId: string) => `${instanceId}\u0000${userId}`;

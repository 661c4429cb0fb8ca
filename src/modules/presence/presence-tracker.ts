import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { EPHEMERAL_BUS, EphemeralBus, ephemeralChannel } from '../../shared/ports/ephemeral-bus.port';

export type PresenceState = 'online' | 'offline';

/**
 * What processes tell each other on a user's presence channel: the sender's latest word on
 * the user (`online`), or a question (`query`) that every process holding the user online
 * answers at once, so a process that starts watching need not wait for the next heartbeat.
 */
export interface PresenceSignal {
  readonly process_id: string;
  readonly user_id: string;
  readonly online?: boolean;
  readonly query?: true;
}

export interface PresenceTrackerOptions {
  /** Identifies this process's announcements; random by default. */
  readonly processId?: string;
  /** How often this process re-announces the users it holds online. */
  readonly heartbeatMs?: number;
  /** How long another process's "online" counts without being repeated. */
  readonly ttlMs?: number;
  /** How often announcements that stopped coming are noticed. */
  readonly sweepMs?: number;
  readonly now?: () => number;
  readonly onError?: (error: unknown) => void;
}

export const PRESENCE_OPTIONS = Symbol('PresenceTrackerOptions');

export interface PresenceWatch {
  /** The state when the watch began; later changes go to the listener. */
  readonly state: PresenceState;
  stop(): void;
}

/** One user this process cares about: registered here, watched here, or both. */
interface Tracked {
  readonly userId: string;
  readonly channel: string;
  /** Open register subscriptions of the user in this process. */
  registrations: number;
  readonly watchers: Set<(state: PresenceState) => void>;
  /** Other processes that last said "online", with when that was heard (local clock). */
  readonly remote: Map<string, number>;
  state: PresenceState;
  unsubscribe: () => void;
}

/**
 * Who is online, across API processes. A user is online while a register subscription of
 * theirs is open in any process. Each process counts its own register subscriptions and
 * announces changes on the user's ephemeral presence channel, re-announcing its online
 * users every heartbeat; another process's "online" holds until it says "offline" or falls
 * silent for `ttlMs` (a crashed process). Only users registered or watched here are
 * followed, so a process subscribes to the channels of those users alone.
 *
 * Nothing here touches the event log: presence has no history.
 */
@Injectable()
export class PresenceTracker implements OnApplicationShutdown {
  private readonly processId: string;
  private readonly heartbeatMs: number;
  private readonly ttlMs: number;
  private readonly sweepMs: number;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;
  private readonly tracked = new Map<string, Tracked>();
  private heartbeat: NodeJS.Timeout | null = null;
  private sweep: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    @Inject(EPHEMERAL_BUS) private readonly bus: EphemeralBus,
    @Optional() @Inject(PRESENCE_OPTIONS) options: PresenceTrackerOptions | null = null,
  ) {
    const logger = new Logger('presence');
    this.processId = options?.processId ?? randomUUID();
    this.heartbeatMs = options?.heartbeatMs ?? 10_000;
    this.ttlMs = options?.ttlMs ?? 25_000;
    this.sweepMs = options?.sweepMs ?? 2_500;
    this.now = options?.now ?? Date.now;
    this.onError = options?.onError ?? ((error) => logger.error('presence signal failed', (error as Error)?.stack));
  }

  /** The user is online while the returned release has not been called (it may be called twice). */
  register(instanceId: string, userId: string): () => void {
    if (this.stopped) return () => undefined;
    const entry = this.follow(instanceId, userId);
    entry.registrations++;
    if (entry.registrations === 1) {
      this.announce(entry, true);
      this.recompute(entry);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.tracked.get(entry.channel) !== entry) return; // stopped meanwhile
      entry.registrations--;
      if (entry.registrations === 0) {
        this.announce(entry, false);
        this.recompute(entry);
      }
      this.unfollowIfIdle(entry);
    };
  }

  /** Follows a user's state: the current one now, each change through `listener`. */
  watch(instanceId: string, userId: string, listener: (state: PresenceState) => void): PresenceWatch {
    if (this.stopped) return { state: 'offline', stop: () => undefined };
    const entry = this.follow(instanceId, userId);
    entry.watchers.add(listener);
    return {
      state: entry.state,
      stop: () => {
        if (!entry.watchers.delete(listener)) return;
        this.unfollowIfIdle(entry);
      },
    };
  }

  /** What this process knows now (offline for users it does not follow). */
  stateOf(instanceId: string, userId: string): PresenceState {
    return this.tracked.get(ephemeralChannel('presence', instanceId, userId))?.state ?? 'offline';
  }

  /** Says "offline" for the users still registered here, then stops following anyone. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopTimers();
    const farewells: Promise<void>[] = [];
    for (const entry of this.tracked.values()) {
      entry.unsubscribe();
      if (entry.registrations > 0) farewells.push(this.publish(entry, { online: false }));
    }
    this.tracked.clear();
    await Promise.all(farewells);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  private follow(instanceId: string, userId: string): Tracked {
    const channel = ephemeralChannel('presence', instanceId, userId);
    const existing = this.tracked.get(channel);
    if (existing) return existing;
    const entry: Tracked = {
      userId,
      channel,
      registrations: 0,
      watchers: new Set(),
      remote: new Map(),
      state: 'offline',
      unsubscribe: () => undefined,
    };
    this.tracked.set(channel, entry);
    entry.unsubscribe = this.bus.subscribe(channel, (message) => this.receive(entry, message));
    // Learn at once what the other processes hold, rather than at their next heartbeat.
    void this.publish(entry, { query: true });
    this.startTimers();
    return entry;
  }

  private unfollowIfIdle(entry: Tracked): void {
    if (entry.registrations > 0 || entry.watchers.size > 0) return;
    if (this.tracked.get(entry.channel) !== entry) return;
    entry.unsubscribe();
    this.tracked.delete(entry.channel);
    if (this.tracked.size === 0) this.stopTimers();
  }

  private receive(entry: Tracked, message: unknown): void {
    if (!isPresenceSignal(message) || message.process_id === this.processId) return;
    if (this.tracked.get(entry.channel) !== entry) return;
    if (message.query) {
      if (entry.registrations > 0) this.announce(entry, true);
      return;
    }
    if (message.online === true) entry.remote.set(message.process_id, this.now());
    else if (message.online === false) entry.remote.delete(message.process_id);
    else return;
    this.recompute(entry);
  }

  private announce(entry: Tracked, online: boolean): void {
    void this.publish(entry, { online });
  }

  private async publish(entry: Tracked, what: { online: boolean } | { query: true }): Promise<void> {
    const signal: PresenceSignal = { process_id: this.processId, user_id: entry.userId, ...what };
    try {
      await this.bus.publish(entry.channel, signal);
    } catch (error) {
      this.onError(error);
    }
  }

  private recompute(entry: Tracked): void {
    const now = this.now();
    for (const [processId, heardAt] of entry.remote) {
      if (now - heardAt >= this.ttlMs) entry.remote.delete(processId);
    }
    const state: PresenceState = entry.registrations > 0 || entry.remote.size > 0 ? 'online' : 'offline';
    if (state === entry.state) return;
    entry.state = state;
    for (const watcher of [...entry.watchers]) {
      try {
        watcher(state);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  private startTimers(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      for (const entry of this.tracked.values()) if (entry.registrations > 0) this.announce(entry, true);
    }, this.heartbeatMs);
    this.sweep = setInterval(() => {
      for (const entry of [...this.tracked.values()]) if (entry.remote.size > 0) this.recompute(entry);
    }, this.sweepMs);
    this.heartbeat.unref();
    this.sweep.unref();
  }

  private stopTimers(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.sweep) clearInterval(this.sweep);
    this.heartbeat = this.sweep = null;
  }
}

const isPresenceSignal = (m: unknown): m is PresenceSignal =>
  typeof m === 'object' &&
  m !== null &&
  typeof (m as PresenceSignal).process_id === 'string' &&
  typeof (m as PresenceSignal).user_id === 'string';

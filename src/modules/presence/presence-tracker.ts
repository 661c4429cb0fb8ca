import { Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { EPHEMERAL_BUS, EphemeralBus, ephemeralChannel } from '../../shared/ports/ephemeral-bus.port';
import { PRESENCE_OPTIONS, PresenceTrackerOptions, presenceSettings } from './presence-options';
import { isPresenceSignal, OtherHolders, PresenceSignal } from './presence-signals';

export type PresenceState = 'online' | 'offline';

export interface PresenceWatch {
  stop(): void;
}

type Listener = (state: PresenceState) => void;

/** One user this process cares about: registered here, watched here, or both. */
interface Tracked {
  readonly userId: string;
  readonly channel: string;
  /** Open register subscriptions of the user in this process. */
  registrations: number;
  /** Watchers told a first state; they hear every change. */
  readonly watchers: Set<Listener>;
  /** Watchers not told anything yet: the user is offline here, and that may not be true yet. */
  readonly waiting: Set<Listener>;
  /** When this process asked the others (local clock). */
  readonly queriedAt: number;
  /** By when the other processes' answers to the query are in (local clock). */
  answersBy: number;
  settleTimer: NodeJS.Timeout | null;
  /** Other processes that hold the user online. */
  readonly remote: OtherHolders;
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
 * A watch's first answer is truthful without a flicker: "online" goes at once, but "offline"
 * is held back while the process is young (`restartGraceMs` from its first presence
 * subscription: after a restart the watchers may come back before the users they watch)
 * and until the other processes answered the query (bounded by `answerWaitMs`).
 *
 * Nothing here touches the event log: presence has no history.
 */
@Injectable()
export class PresenceTracker implements OnApplicationShutdown {
  private readonly settings: Required<PresenceTrackerOptions>;
  private readonly tracked = new Map<string, Tracked>();
  private heartbeat: NodeJS.Timeout | null = null;
  private sweep: NodeJS.Timeout | null = null;
  private stopped = false;
  /** When this process was first asked about presence (local clock): the start of its youth. */
  private firstFollowAt: number | null = null;

  constructor(
    @Inject(EPHEMERAL_BUS) private readonly bus: EphemeralBus,
    @Optional() @Inject(PRESENCE_OPTIONS) options: PresenceTrackerOptions | null = null,
  ) {
    const logger = new Logger('presence');
    this.settings = presenceSettings(options, (error) => logger.error('presence signal failed', (error as Error)?.stack));
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

  /**
   * Follows a user's state through `listener`: the first state once it is known (at once
   * when online, or when this process is neither young nor waiting for answers; within
   * `restartGraceMs` or `answerWaitMs` otherwise), then each change.
   */
  watch(instanceId: string, userId: string, listener: Listener): PresenceWatch {
    if (this.stopped) {
      listener('offline');
      return { stop: () => undefined };
    }
    const entry = this.follow(instanceId, userId);
    entry.waiting.add(listener);
    this.settle(entry);
    return {
      stop: () => {
        if (!entry.watchers.delete(listener) && !entry.waiting.delete(listener)) return;
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
    const farewells: Promise<boolean>[] = [];
    for (const entry of this.tracked.values()) {
      entry.unsubscribe();
      this.clearSettleTimer(entry);
      if (entry.registrations > 0) farewells.push(this.publish(entry, { online: false, stopping: true }));
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
    const now = this.settings.now();
    this.firstFollowAt ??= now;
    const entry: Tracked = {
      userId,
      channel,
      registrations: 0,
      watchers: new Set(),
      waiting: new Set(),
      queriedAt: now,
      answersBy: now + this.settings.answerWaitMs,
      settleTimer: null,
      remote: new OtherHolders(this.settings.ttlMs, this.settings.restartGraceMs),
      state: 'offline',
      unsubscribe: () => undefined,
    };
    this.tracked.set(channel, entry);
    entry.unsubscribe = this.bus.subscribe(channel, (message) => this.receive(entry, message));
    // Learn at once what the other processes hold, rather than at their next heartbeat. If
    // the question is not sent, no answer will come: stop waiting for one.
    void this.publish(entry, { query: true }).then((sent) => {
      if (!sent) this.answersIn(entry, this.settings.now());
    });
    this.startTimers();
    return entry;
  }

  private unfollowIfIdle(entry: Tracked): void {
    if (entry.registrations > 0 || entry.watchers.size > 0) return;
    if (this.tracked.get(entry.channel) !== entry) return;
    entry.unsubscribe();
    this.clearSettleTimer(entry);
    this.tracked.delete(entry.channel);
    if (this.tracked.size === 0) this.stopTimers();
  }

  private receive(entry: Tracked, message: unknown): void {
    if (!isPresenceSignal(message)) return;
    if (this.tracked.get(entry.channel) !== entry) return;
    const now = this.settings.now();
    if (message.process_id === this.settings.processId) {
      // Our query came back: the others heard it about now, and their answers take about as
      // long again to arrive.
      if (message.query) this.answersIn(entry, now + (now - entry.queriedAt));
      return;
    }
    if (message.query) {
      if (entry.registrations > 0) this.announce(entry, true);
      return;
    }
    if (entry.remote.hear(message, now)) this.recompute(entry);
  }

  /** The other processes' answers to the entry's query are in by `at` (if that is sooner). */
  private answersIn(entry: Tracked, at: number): void {
    if (at >= entry.answersBy) return;
    entry.answersBy = at;
    this.settle(entry);
  }

  /**
   * Gives the waiting watchers their first state once it is truthful: "online" at once,
   * "offline" once the process is past its youth and the answers are in; until then a timer
   * comes back at that moment.
   */
  private settle(entry: Tracked): void {
    if (entry.waiting.size === 0 || this.tracked.get(entry.channel) !== entry) return;
    this.clearSettleTimer(entry);
    const heldUntil = Math.max(entry.answersBy, (this.firstFollowAt ?? 0) + this.settings.restartGraceMs);
    const wait = heldUntil - this.settings.now();
    if (entry.state === 'offline' && wait > 0) {
      entry.settleTimer = setTimeout(() => {
        entry.settleTimer = null;
        this.settle(entry);
      }, wait);
      entry.settleTimer.unref();
      return;
    }
    const told = [...entry.waiting];
    entry.waiting.clear();
    for (const listener of told) entry.watchers.add(listener);
    this.tell(told, entry.state);
  }

  private clearSettleTimer(entry: Tracked): void {
    if (entry.settleTimer) clearTimeout(entry.settleTimer);
    entry.settleTimer = null;
  }

  private tell(listeners: readonly Listener[], state: PresenceState): void {
    for (const listener of listeners) {
      try {
        listener(state);
      } catch (error) {
        this.settings.onError(error);
      }
    }
  }

  private announce(entry: Tracked, online: boolean): void {
    void this.publish(entry, { online });
  }

  /** Whether the signal was handed to the bus. */
  private async publish(
    entry: Tracked,
    what: { online: true } | { online: false; stopping?: true } | { query: true },
  ): Promise<boolean> {
    const signal: PresenceSignal = { process_id: this.settings.processId, user_id: entry.userId, ...what };
    try {
      await this.bus.publish(entry.channel, signal);
      return true;
    } catch (error) {
      this.settings.onError(error);
      return false;
    }
  }

  private recompute(entry: Tracked): void {
    const state: PresenceState = entry.registrations > 0 || entry.remote.countAt(this.settings.now()) > 0 ? 'online' : 'offline';
    if (state === entry.state) return;
    entry.state = state;
    this.tell([...entry.watchers], state);
    // Waiting watchers are told an "online" at once.
    this.settle(entry);
  }

  private startTimers(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => {
      for (const entry of this.tracked.values()) if (entry.registrations > 0) this.announce(entry, true);
    }, this.settings.heartbeatMs);
    this.sweep = setInterval(() => {
      for (const entry of [...this.tracked.values()]) if (!entry.remote.isEmpty) this.recompute(entry);
    }, this.settings.sweepMs);
    this.heartbeat.unref();
    this.sweep.unref();
  }

  private stopTimers(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.sweep) clearInterval(this.sweep);
    this.heartbeat = this.sweep = null;
  }
}

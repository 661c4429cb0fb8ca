import { randomUUID } from 'node:crypto';

/**
 * chatkit-client (@pusher/platform 0.18) resubscribes after 2 s, 4 s, then every 5 s
 * (`maxTimeoutMillis`), each client and subscription on its own schedule: once a server is
 * back, every client that was connected is back within about 5 s of the first one.
 */
const SDK_LONGEST_RECONNECT_PAUSE_MS = 5_000;

export interface PresenceTrackerOptions {
  /** Identifies this process's announcements; random by default. */
  readonly processId?: string;
  /** How often this process re-announces the users it holds online. */
  readonly heartbeatMs?: number;
  /** How long another process's "online" counts without being repeated. */
  readonly ttlMs?: number;
  /** How often announcements that stopped coming are noticed. */
  readonly sweepMs?: number;
  /**
   * How long after this process's first presence subscription a first "offline" is held
   * back: the clients that were connected before a restart come back in that time, so
   * their watchers are not told "offline" for users who never left. Just over the SDK's
   * longest reconnect pause by default.
   */
  readonly restartGraceMs?: number;
  /**
   * At most how long a new watch waits for the other processes' answers to its query before
   * it may say "offline" (it waits as long as its own query took to come back, up to this).
   */
  readonly answerWaitMs?: number;
  readonly now?: () => number;
  readonly onError?: (error: unknown) => void;
}

export const PRESENCE_OPTIONS = Symbol('PresenceTrackerOptions');

/** The options with the defaults filled in (`onError` defaults to the caller's logging). */
export function presenceSettings(
  options: PresenceTrackerOptions | null,
  logError: (error: unknown) => void,
): Required<PresenceTrackerOptions> {
  return {
    processId: options?.processId ?? randomUUID(),
    heartbeatMs: options?.heartbeatMs ?? 10_000,
    ttlMs: options?.ttlMs ?? 25_000,
    sweepMs: options?.sweepMs ?? 2_500,
    restartGraceMs: options?.restartGraceMs ?? SDK_LONGEST_RECONNECT_PAUSE_MS + 1_000,
    answerWaitMs: options?.answerWaitMs ?? 2_000,
    now: options?.now ?? Date.now,
    onError: options?.onError ?? logError,
  };
}

/**
 * What processes tell each other on a user's presence channel: the sender's latest word on
 * the user (`online`), or a question (`query`) that every process holding the user online
 * answers at once, so a process that starts watching need not wait for the next heartbeat.
 * `stopping` marks the "offline" of a process that drains: its users are about to reconnect
 * elsewhere, so the others keep them online for the reconnect grace rather than at once.
 */
export interface PresenceSignal {
  readonly process_id: string;
  readonly user_id: string;
  readonly online?: boolean;
  readonly query?: true;
  readonly stopping?: true;
}

export const isPresenceSignal = (m: unknown): m is PresenceSignal =>
  typeof m === 'object' &&
  m !== null &&
  typeof (m as PresenceSignal).process_id === 'string' &&
  typeof (m as PresenceSignal).user_id === 'string';

/**
 * The other processes that hold one user online, by what each last said (times on the local
 * clock): an "online" holds for `ttlMs` from when it was heard (heartbeats renew it, a crashed
 * process falls silent), an "offline" ends it at once, and a draining process's "offline"
 * (`stopping`) holds for `stoppingGraceMs` (at most `ttlMs`), while its users reconnect elsewhere.
 */
export class OtherHolders {
  private readonly heardAt = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly stoppingGraceMs: number,
  ) {}

  /** Takes in another process's word on the user: false when the signal says nothing of its state. */
  hear(signal: PresenceSignal, now: number): boolean {
    if (signal.online === true) {
      this.heardAt.set(signal.process_id, now);
    } else if (signal.online === false && signal.stopping) {
      this.heardAt.set(signal.process_id, now - this.ttlMs + Math.min(this.stoppingGraceMs, this.ttlMs));
    } else if (signal.online === false) {
      this.heardAt.delete(signal.process_id);
    } else {
      return false;
    }
    return true;
  }

  /** How many hold the user at `now`; those whose word has run out are forgotten. */
  countAt(now: number): number {
    for (const [processId, heardAt] of this.heardAt) {
      if (now - heardAt >= this.ttlMs) this.heardAt.delete(processId);
    }
    return this.heardAt.size;
  }

  /** Whether any word is still kept (some may have run out: see countAt). */
  get isEmpty(): boolean {
    return this.heardAt.size === 0;
  }
}

import type { DataKeyRing } from '../../shared/crypto/data-key-ring';
import { isSealedFields, keyIdsOf } from '../../shared/crypto/sealed-fields';
import type { LogPosition, RecordedEvent } from '../../shared/domain/event';
import { SEALED_FIELD } from '../../shared/application/operations/sealing-event-store';
import type { ToProjectorThread } from './protocol';

type Handed = Extract<ToProjectorThread, { kind: 'handed' }>;

/**
 * The request thread's side of handing the projector thread the events its live log reads back
 * (LiveLog.tap): gathered over a turn of the event loop (a commit's events arrive in one), then
 * posted in one message with the plaintext the request thread's key ring holds of each (what it
 * sealed a moment before: no deciphering), so that the projector thread folds them without
 * reading the log or opening them (HandedEvents).
 *
 * `flush` posts what is gathered at once: a destroy of keys does so before it tells the
 * projector thread, so that no plaintext of a destroyed key arrives after the word of its destroy.
 */
export class HandOver {
  private after: LogPosition | null = null;
  private events: RecordedEvent[] = [];
  private plaintexts: (string | null)[] = [];
  private flushing: NodeJS.Immediate | null = null;

  constructor(
    private readonly keys: DataKeyRing,
    private readonly post: (message: Handed) => void,
  ) {}

  /** A LiveTap: the event, and the position of the one read before it. */
  readonly read = (event: RecordedEvent, after: LogPosition | null): void => {
    // A run that does not continue the gathered one (the live log resubscribed) starts a message of its own.
    if (this.events.length && this.events[this.events.length - 1].position !== after) this.flush();
    if (this.events.length === 0) this.after = after;
    this.events.push(event);
    this.plaintexts.push(this.plaintextOf(event));
    this.flushing ??= setImmediate(() => this.flush());
  };

  flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = null;
    if (this.events.length === 0) return;
    const message: Handed = { kind: 'handed', after: this.after, events: this.events, plaintexts: this.plaintexts };
    this.events = [];
    this.plaintexts = [];
    this.post(message);
  }

  /** The plaintext of the event's sealed fields when the ring holds it (sealed under one key), else null. */
  private plaintextOf(event: RecordedEvent): string | null {
    const sealed = (event.data as Record<string, unknown> | null)?.[SEALED_FIELD];
    if (!isSealedFields(sealed) || keyIdsOf(sealed).length !== 1) return null;
    const known = this.keys.known(sealed.k, sealed.ct);
    return typeof known === 'string' ? known : null;
  }
}

import { LogPosition, RecordedEvent } from '../../domain/event';
import { INSTANCE_WIPED, instanceWipesStream } from '../../domain/instance-wipe';
import { parseStreamName } from '../../domain/streams';
import { EventStore } from '../../ports/event-store.port';

/**
 * Where each instance was last wiped (the log position of its newest `InstanceWiped`).
 * The log keeps the history; the write side treats every event of an instance's entity
 * streams (`<category>-<instance>.<id>`) at or before that position as absent, so users,
 * rooms, timelines, cursors, roles and jobs start afresh and their ids can be used again.
 * Instance-level streams without an entity id (`instance-<i>`: keys; `messageids-<i>`: the
 * id sequence, so message ids keep growing) are the instance itself and outlive a wipe.
 *
 * Read lazily (one backwards read of an instance's wipe stream, the first time the instance
 * is written in this process), then kept current by `record`: at once by the process that
 * wipes, through the live log in the others.
 */
export class InstanceEpochs {
  private readonly known = new Map<string, LogPosition | null>();
  private readonly loading = new Map<string, Promise<LogPosition | null>>();

  constructor(private readonly events: EventStore) {}

  /** The wipe position that applies to `stream`, or null (never wiped, or an instance-level stream). */
  async wipedAtFor(stream: string): Promise<LogPosition | null> {
    const known = this.knownWipedAtFor(stream);
    if (known !== undefined) return known;
    return this.wipedAt(parseStreamName(stream)!.instanceId);
  }

  /**
   * As `wipedAtFor`, at once when it is known without reading the log (every time but the first
   * for an instance), else undefined: the write side loads eight or nine streams per send, and an
   * `await` of an answer already known costs each of them turns of the microtask queue.
   */
  knownWipedAtFor(stream: string): LogPosition | null | undefined {
    const parsed = parseStreamName(stream);
    if (!parsed || parsed.id === '') return null;
    return this.known.get(parsed.instanceId);
  }

  async wipedAt(instanceId: string): Promise<LogPosition | null> {
    if (this.known.has(instanceId)) return this.known.get(instanceId)!;
    let load = this.loading.get(instanceId);
    if (!load) {
      load = this.events
        .readStream(instanceWipesStream(instanceId), { direction: 'backwards', maxCount: 1 })
        .then(([newest]) => {
          this.record(instanceId, newest?.position ?? null);
          return this.known.get(instanceId)!;
        })
        .finally(() => this.loading.delete(instanceId));
      this.loading.set(instanceId, load);
    }
    return load;
  }

  /** A wipe at `position` (only ever moves forward). */
  record(instanceId: string, position: LogPosition | null): void {
    const current = this.known.get(instanceId) ?? null;
    if (position !== null && (current === null || position > current)) this.known.set(instanceId, position);
    else if (!this.known.has(instanceId)) this.known.set(instanceId, current);
  }

  /** Feeds a wipe seen in the log (from another process, or replayed). */
  observe(event: RecordedEvent): void {
    if (event.type !== INSTANCE_WIPED) return;
    const parsed = parseStreamName(event.streamName);
    if (parsed) this.record(parsed.instanceId, event.position);
  }
}

export const INSTANCE_EPOCHS = Symbol('InstanceEpochs');

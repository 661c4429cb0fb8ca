import { RecordedEvent } from '../../domain/event';
import { AnyPersonalDataRule, AnyPreparedKeysRule, AnyShredRule, DataKeyOf, DataKeySelector } from '../../domain/personal-data';
import { DataKeyRing } from '../../crypto/data-key-ring';
import { isSealedFields, openFields, SealedFields, sealFields } from '../../crypto/sealed-fields';
import {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
  SpaceLeft,
  SubscribeToAllOptions,
  SubscribeToStreamOptions,
} from '../../ports/event-store.port';

/** The field of `data` that holds an event's sealed personal fields in the log. */
export const SEALED_FIELD = 'sealed';

/** Every context's rules, by event type. */
export interface PersonalDataRules {
  readonly sealing: readonly AnyPersonalDataRule[];
  readonly preparing: readonly AnyPreparedKeysRule[];
  readonly shredding: readonly AnyShredRule[];
}

type Data = Record<string, unknown>;

/**
 * The event store as the rest of the process sees it, with personal fields sealed in the log
 * (crypto-shredding). On append, each event type's personal fields (its PersonalDataRule) are
 * sealed with a data key kept outside the log (DataKeyRing); every read path (readStream,
 * readAll, both subscriptions) opens them again, so deciders, projections, subscriptions,
 * exports and the audit API see plaintext while the key exists, and, once it is destroyed,
 * the rule's erased values with `erased: true`. Events written before sealing, or by types
 * without a rule, are read as they are.
 *
 * Once a delete's append is durable, what it destroys (its ShredRule) is destroyed before the
 * append is answered. A failure there is handed to `onShredFailure`; the sweep heals it.
 */
export class SealingEventStore implements EventStore {
  private readonly sealing: ReadonlyMap<string, AnyPersonalDataRule>;
  private readonly preparing: ReadonlyMap<string, AnyPreparedKeysRule>;
  private readonly shredding: ReadonlyMap<string, AnyShredRule>;

  constructor(
    private readonly inner: EventStore,
    private readonly keys: DataKeyRing,
    rules: PersonalDataRules,
    private readonly onShredFailure: (error: unknown, selectors: readonly DataKeySelector[]) => void = () => undefined,
  ) {
    this.sealing = new Map(rules.sealing.map((r) => [r.type, r]));
    this.preparing = new Map(rules.preparing.map((r) => [r.type, r]));
    this.shredding = new Map(rules.shredding.map((r) => [r.type, r]));
  }

  /** The log as stored: sealed fields unopened, plaintext from before sealing as it is. */
  get stored(): EventStore {
    return this.inner;
  }

  /** The event types whose append destroys keys. */
  get shredTypes(): readonly string[] {
    return [...this.shredding.keys()];
  }

  get maxAppendBytes(): number | undefined {
    return this.inner.maxAppendBytes;
  }

  async append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    const sealed = await this.seal(streamName, events);
    const result = await this.inner.append(streamName, sealed, expected);
    // Keys made after this moment belong to what comes after the delete (the same ids used again).
    const upTo = Date.now();
    const selectors = (await this.shredsOf(streamName, events)).map((s) => ({ createdUpTo: upTo, ...s }));
    if (selectors.length) await this.shred(selectors);
    return result;
  }

  /** What the events of an append destroy (their ShredRules), in order; rules read the log as stored. */
  async shredsOf(streamName: string, events: readonly { type: string; data: unknown }[]): Promise<DataKeySelector[]> {
    const selectors: DataKeySelector[] = [];
    for (const event of events) {
      const rule = this.shredding.get(event.type);
      if (rule) selectors.push(...(await rule.destroys(event as never, streamName, this.inner)));
    }
    return selectors;
  }

  /** Destroys what a durable delete destroys; a failure is reported, not thrown (the delete itself is stored; the sweep destroys it later). */
  async shred(selectors: readonly DataKeySelector[]): Promise<void> {
    try {
      await this.destroyNow(selectors);
    } catch (error) {
      this.onShredFailure(error, selectors);
    }
  }

  /** Destroys keys, failing when the store does (the sweep's way: it tries again on its next pass). */
  async destroyNow(selectors: readonly DataKeySelector[]): Promise<void> {
    for (const selector of selectors) await this.keys.destroy(selector);
  }

  async readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readStream(streamName, options));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readAll(options));
  }

  headPosition() {
    return this.inner.headPosition();
  }

  subscribeToAll(options?: SubscribeToAllOptions): LogSubscription {
    return this.opened(this.inner.subscribeToAll(options));
  }

  subscribeToStream(streamName: string, options?: SubscribeToStreamOptions): LogSubscription {
    return this.opened(this.inner.subscribeToStream(streamName, options));
  }

  recognizes(position: string): boolean {
    return this.inner.recognizes?.(position) ?? true;
  }

  spaceLeft(): Promise<SpaceLeft | null> {
    return this.inner.spaceLeft?.() ?? Promise.resolve(null);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /**
   * The events with their personal fields sealed. Every key they need, and every key they make
   * ready for later events (PreparedKeysRule), is created in one durable write before the append.
   */
  private async seal(streamName: string, events: readonly EventToAppend[]): Promise<readonly EventToAppend[]> {
    const wanted: { index: number; rule: AnyPersonalDataRule; key: DataKeyOf }[] = [];
    const prepared: DataKeyOf[] = [];
    events.forEach((event, index) => {
      const preparing = this.preparing.get(event.type);
      if (preparing) prepared.push(...preparing.prepares(event as never, streamName));
      const rule = this.sealing.get(event.type);
      const data = event.data as Data | null;
      if (!rule || data === null || typeof data !== 'object' || data[SEALED_FIELD] !== undefined) return;
      const key = rule.keyOf(event as never, streamName);
      if (key) wanted.push({ index, rule, key });
    });
    if (wanted.length === 0 && prepared.length === 0) return events;
    const keys = await this.keys.keysFor([...wanted.map((w) => w.key), ...prepared]);
    if (wanted.length === 0) return events;
    const sealed = [...events];
    for (const { index, rule, key } of wanted) {
      const data = { ...(events[index].data as Data) };
      const fields: Data = {};
      for (const field of rule.fields) {
        if (field in data) fields[field] = data[field];
        delete data[field];
      }
      const plaintext = JSON.stringify(fields);
      const sealedFields = sealFields(key.id, keys.get(key.id)!, plaintext);
      // The projectors, the live log and the next command read it back at once: without deciphering.
      this.keys.remember(key.id, sealedFields.ct, plaintext);
      data[SEALED_FIELD] = sealedFields;
      sealed[index] = { ...events[index], data };
    }
    return sealed;
  }

  private async open(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const ids = new Set<string>();
    for (const event of events) {
      const sealed = sealedOf(event);
      if (sealed) ids.add(sealed.k);
    }
    if (ids.size === 0) return events;
    const keys = await this.keys.existing(ids);
    return events.map((event) => this.openWith(event, keys));
  }

  private openWith(event: RecordedEvent, keys: ReadonlyMap<string, Buffer>): RecordedEvent {
    const sealed = sealedOf(event);
    if (!sealed) return event;
    // Copied key by key: a rest pattern with a computed key is a slow generic copy, on every read of every projection.
    const rest: Data = {};
    for (const field in event.data as Data) if (field !== SEALED_FIELD) rest[field] = (event.data as Data)[field];
    const key = keys.get(sealed.k);
    let plaintext = key ? this.keys.plaintextOf(sealed.k, sealed.ct) : undefined;
    if (key && plaintext === undefined) {
      plaintext = openFields(sealed, key) ?? undefined;
      if (plaintext !== undefined) this.keys.remember(sealed.k, sealed.ct, plaintext);
    }
    if (plaintext !== undefined) return { ...event, data: Object.assign(rest, JSON.parse(plaintext) as Data) };
    return { ...event, data: { ...rest, ...(this.sealing.get(event.type)?.erased ?? {}), erased: true } };
  }

  private opened(subscription: LogSubscription): LogSubscription {
    const open = (event: RecordedEvent) => this.open([event]).then(([opened]) => opened);
    return {
      close: () => subscription.close(),
      async *[Symbol.asyncIterator]() {
        for await (const event of subscription) yield sealedOf(event) ? await open(event) : event;
      },
    };
  }
}

const sealedOf = (event: { data: unknown }): SealedFields | null => {
  const data = event.data as Data | null;
  if (data === null || typeof data !== 'object') return null;
  const sealed = data[SEALED_FIELD];
  return isSealedFields(sealed) ? sealed : null;
};

import { RecordedEvent } from '../../domain/event';
import { AnyPersonalDataRule, AnyPreparedKeysRule, AnyShredRule, DataKeyOf, DataKeySelector } from '../../domain/personal-data';
import { DataKeyRing } from '../../crypto/data-key-ring';
import { isSealedFields, keyIdsOf, openFields, openUnderAll, SealedFields, sealFields, sealUnderAll } from '../../crypto/sealed-fields';
import { ForwardingEventStore } from './forwarding-event-store';
import {
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogSubscription,
  ReadAllOptions,
  ReadStreamOptions,
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
 * append is answered (a `deferred` rule's: by the sweep, ShredSweep). A failure there is
 * handed to `onShredFailure`; the sweep heals it.
 */
export class SealingEventStore extends ForwardingEventStore {
  private readonly sealing: ReadonlyMap<string, AnyPersonalDataRule>;
  private readonly preparing: ReadonlyMap<string, AnyPreparedKeysRule>;
  /** Several contexts may destroy on one event (a room's delete: its messages, its name). */
  private readonly shredding: ReadonlyMap<string, readonly AnyShredRule[]>;
  /** The event types whose append destroys keys before it is answered (a rule not `deferred`). */
  private readonly shreddingAtAppend: ReadonlySet<string>;

  constructor(
    inner: EventStore,
    private readonly keys: DataKeyRing,
    rules: PersonalDataRules,
    private readonly onShredFailure: (error: unknown, selectors: readonly DataKeySelector[]) => void = () => undefined,
  ) {
    super(inner);
    this.sealing = new Map(rules.sealing.map((r) => [r.type, r]));
    this.preparing = new Map(rules.preparing.map((r) => [r.type, r]));
    const shredding = new Map<string, AnyShredRule[]>();
    for (const rule of rules.shredding) shredding.set(rule.type, [...(shredding.get(rule.type) ?? []), rule]);
    this.shredding = shredding;
    this.shreddingAtAppend = new Set(rules.shredding.filter((rule) => !rule.deferred).map((rule) => rule.type));
  }

  /** The log as stored: sealed fields unopened, plaintext from before sealing as it is. */
  get stored(): EventStore {
    return this.inner;
  }

  /** The event types whose append destroys keys. */
  get shredTypes(): readonly string[] {
    return [...this.shredding.keys()];
  }

  override async append(streamName: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    const sealed = await this.seal(streamName, events);
    const result = await this.inner.append(streamName, sealed, expected);
    if (!events.some((event) => this.shreddingAtAppend.has(event.type))) return result;
    // Keys made after this moment belong to what comes after the delete (the same ids used again).
    const upTo = Date.now();
    const selectors = (await this.shredsOf(streamName, events, 'at-append')).map((s) => ({ createdUpTo: upTo, ...s }));
    if (selectors.length) await this.shred(selectors);
    return result;
  }

  /**
   * What the events of an append destroy (their ShredRules), in order; rules read the log as
   * stored. `which`: every rule's, those destroyed before an append is answered, or those the
   * sweep destroys (`deferred`).
   */
  async shredsOf(streamName: string, events: readonly { type: string; data: unknown }[], which: 'all' | 'at-append' | 'deferred' = 'all'): Promise<DataKeySelector[]> {
    const selectors: DataKeySelector[] = [];
    for (const event of events) {
      for (const rule of this.shredding.get(event.type) ?? []) {
        if (which !== 'all' && (rule.deferred === true) !== (which === 'deferred')) continue;
        selectors.push(...(await rule.destroys(event as never, streamName, this.inner)));
      }
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

  /** Keys made ready (created durably, in one write, derived at first use) for events to come that name them. */
  async prepareKeys(keys: readonly DataKeyOf[]): Promise<void> {
    await this.keys.prepare(keys);
  }

  /** The data keys the events of an append to `streamName` are sealed with (their PersonalDataRules), as the append picks them. */
  dataKeysOf(streamName: string, events: readonly { type: string; data: unknown }[]): DataKeyOf[] {
    const keys: DataKeyOf[] = [];
    for (const event of events) {
      const key = this.sealingKeyOf(event, streamName);
      if (key) keys.push(key.key);
    }
    return keys;
  }

  /**
   * `plaintext` sealed under every one of the existing data keys `ids` together (sealUnderAll):
   * it reads only while all of them exist, so whichever delete destroys one takes it too. Null
   * when one is gone already (what it would show was deleted); no key is ever made here.
   */
  async sealUnderKeys(ids: readonly string[], plaintext: string): Promise<SealedFields | null> {
    const keys = await this.keys.existing(ids);
    return ids.every((id) => keys.has(id)) ? sealUnderAll(keys, plaintext) : null;
  }

  /** What `sealUnderKeys` sealed, or null once one of its keys is destroyed. */
  async openUnderKeys(sealed: SealedFields): Promise<string | null> {
    const ids = keyIdsOf(sealed);
    const keys = await this.keys.existing(ids);
    return ids.every((id) => keys.has(id)) ? openUnderAll(sealed, keys) : null;
  }

  override async readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readStream(streamName, options));
  }

  override async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.open(await this.inner.readAll(options));
  }

  override subscribeToAll(options?: SubscribeToAllOptions): LogSubscription {
    return this.opened(this.inner.subscribeToAll(options));
  }

  override subscribeToStream(streamName: string, options?: SubscribeToStreamOptions): LogSubscription {
    return this.opened(this.inner.subscribeToStream(streamName, options));
  }

  /**
   * The events with their personal fields sealed. Every key they need, and every key they make
   * ready for later events (PreparedKeysRule), is created durably before the append (the store
   * groups creates that arrive together into one write).
   */
  private async seal(streamName: string, events: readonly EventToAppend[]): Promise<readonly EventToAppend[]> {
    const wanted: { index: number; rule: AnyPersonalDataRule; key: DataKeyOf }[] = [];
    const prepared: DataKeyOf[] = [];
    events.forEach((event, index) => {
      const preparing = this.preparing.get(event.type);
      if (preparing) prepared.push(...preparing.prepares(event as never, streamName));
      const sealing = this.sealingKeyOf(event, streamName);
      if (sealing) wanted.push({ index, ...sealing });
    });
    if (wanted.length === 0 && prepared.length === 0) return events;
    const requests = wanted.map((w) => w.key);
    const keys = prepared.length === 0 ? await this.keys.keysFor(requests) : (await Promise.all([this.keys.keysFor(requests), this.keys.prepare(prepared)]))[0];
    if (wanted.length === 0) return events;
    const sealed = [...events];
    for (const { index, rule, key } of wanted) {
      const { data, sealedFields, plaintext } = sealEventData(rule, events[index].data as Data, key.id, keys.get(key.id)!);
      // The projectors, the live log and the next command read it back at once: without deciphering.
      this.keys.sealed(key.id, sealedFields.ct, plaintext);
      sealed[index] = { ...events[index], data };
    }
    return sealed;
  }

  /** The rule and key an event is sealed with on append, or null when it seals nothing. */
  private sealingKeyOf(event: { type: string; data: unknown }, streamName: string): { rule: AnyPersonalDataRule; key: DataKeyOf } | null {
    const rule = this.sealing.get(event.type);
    const key = rule ? keyToSeal(rule, event, streamName) : null;
    return key ? { rule: rule!, key } : null;
  }

  private async open(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    // What the cache knows of each sealed event (its plaintext, its key, its key gone), in one
    // look each; the store is asked only about the keys the cache does not know.
    const known: (string | Buffer | null | undefined)[] = new Array(events.length);
    let sealedEvents = 0;
    const unknown = new Set<string>();
    for (let index = 0; index < events.length; index++) {
      const sealed = sealedOf(events[index]);
      if (!sealed) continue;
      sealedEvents++;
      known[index] = this.keys.known(sealed.k, sealed.ct);
      if (known[index] === undefined) unknown.add(sealed.k);
    }
    if (sealedEvents === 0) return events;
    const keys = unknown.size ? await this.keys.existing(unknown) : null;
    return events.map((event, index) => {
      const sealed = sealedOf(event);
      if (!sealed) return event;
      const found = known[index];
      return this.openWith(event, sealed, found === undefined ? (keys?.get(sealed.k) ?? null) : found);
    });
  }

  /** `sealed` opened, as the event's data: from its plaintext, or with its key (null: destroyed). */
  private openWith(event: RecordedEvent, sealed: SealedFields, known: string | Buffer | null): RecordedEvent {
    const { rest } = splitFields(event.data as Data, [SEALED_FIELD]);
    let plaintext = typeof known === 'string' ? known : undefined;
    if (known instanceof Buffer) {
      plaintext = openFields(sealed, known) ?? undefined;
      if (plaintext !== undefined) this.keys.remember(sealed.k, sealed.ct, plaintext);
    }
    if (plaintext !== undefined) return { ...event, data: Object.assign(rest, JSON.parse(plaintext) as Data) };
    return { ...event, data: Object.assign(rest, this.sealing.get(event.type)?.erased, { erased: true }) };
  }

  /**
   * One event of the log as stored, opened: at once when the cache knows its key's fate, else
   * once the store is asked (the live log opens what a listener takes this way).
   */
  openEvent(event: RecordedEvent): RecordedEvent | Promise<RecordedEvent> {
    const sealed = sealedOf(event);
    if (!sealed) return event;
    const known = this.keys.known(sealed.k, sealed.ct);
    if (known === undefined) return this.open([event]).then(([opened]) => opened);
    return this.openWith(event, sealed, known);
  }

  /**
   * A subscription's events opened one by one: at once when the cache knows the key's fate (no
   * turn of the event loop per event). An iterator of its own rather than an async generator,
   * whose every event costs several promises more, on every event of every subscription.
   */
  private opened(subscription: LogSubscription): LogSubscription {
    const openOne = (event: RecordedEvent) => this.openEvent(event);
    const openResult = (result: IteratorResult<RecordedEvent>): IteratorResult<RecordedEvent> | Promise<IteratorResult<RecordedEvent>> => {
      if (result.done) return result;
      const opened = openOne(result.value);
      return opened instanceof Promise ? opened.then((value) => ({ done: false, value })) : { done: false, value: opened };
    };
    return {
      close: () => subscription.close(),
      [Symbol.asyncIterator]: (): AsyncIterator<RecordedEvent> => {
        const events = subscription[Symbol.asyncIterator]();
        return {
          next: () => events.next().then(openResult),
          // A consumer that stops early (break, throw) ends the subscription's own iteration too.
          return: (value?: unknown) => (events.return ? events.return(value) : Promise.resolve({ done: true as const, value: undefined })),
        };
      },
    };
  }
}

/**
 * An event's data with its rule's personal fields taken out and sealed under `key` into
 * `SEALED_FIELD` (the form the log holds), and what was sealed, as JSON. Every sealing goes
 * through it: appends, and the offline rewrite of events written before sealing.
 */
export function sealEventData(rule: Pick<AnyPersonalDataRule, 'fields'>, original: Data, keyId: string, key: Buffer): { data: Data; sealedFields: SealedFields; plaintext: string } {
  const { fields, rest } = splitFields(original, rule.fields);
  const plaintext = JSON.stringify(fields);
  const sealedFields = sealFields(keyId, key, plaintext);
  rest[SEALED_FIELD] = sealedFields;
  return { data: rest, sealedFields, plaintext };
}

/**
 * The key an event is sealed with under its type's rule, or null when it has nothing to seal:
 * no data object, fields sealed already, or a stream the rule cannot place.
 */
export function keyToSeal(rule: AnyPersonalDataRule, event: { readonly type: string; readonly data: unknown }, streamName: string): DataKeyOf | null {
  const data = event.data as Data | null;
  if (data === null || typeof data !== 'object' || data[SEALED_FIELD] !== undefined) return null;
  return rule.keyOf(event as never, streamName);
}

/**
 * An event's data split into the `names` fields and the rest, each a fresh object built key by
 * key: a copy then `delete` would leave the rest a slow dictionary-mode object for every later
 * reader (JSON.stringify in the append, the projections), and a rest pattern with computed
 * keys is a slow generic copy.
 */
function splitFields(data: Data, names: readonly string[]): { fields: Data; rest: Data } {
  const fields: Data = {};
  const rest: Data = {};
  for (const field in data) {
    if (names.includes(field)) fields[field] = data[field];
    else rest[field] = data[field];
  }
  return { fields, rest };
}

const sealedOf = (event: { data: unknown }): SealedFields | null => {
  const data = event.data as Data | null;
  if (data === null || typeof data !== 'object') return null;
  const sealed = data[SEALED_FIELD];
  return isSealedFields(sealed) ? sealed : null;
};

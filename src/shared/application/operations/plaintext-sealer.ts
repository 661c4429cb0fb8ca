import { AnyPersonalDataRule, ShredHistory } from '../../domain/personal-data';
import { DataKeyRequest, DataKeyRing } from '../../crypto/data-key-ring';
import { keyToSeal, SEALED_FIELD, sealEventData } from './sealing-event-store';

/** An event as the log stores it, for sealing after the fact. */
export interface StoredEvent {
  readonly streamName: string;
  readonly type: string;
  readonly data: unknown;
  /** ISO time the log recorded it. */
  readonly recordedAt: string;
}

/**
 * Seals events written before sealing (their personal fields in plaintext) as an append seals
 * them today: the same rules (by event type), the same keys (`keyOf`), the same sealed form.
 * A key that exists already (a user profile updated since) is used as stored; a missing one
 * is made, durably, dated at the first event of the page that uses it, so that the log's
 * deletes (`createdUpTo` their own time) reach it as they would have reached it then.
 */
export class PlaintextSealer {
  private readonly rules: ReadonlyMap<string, AnyPersonalDataRule>;

  constructor(
    private readonly keys: DataKeyRing,
    rules: readonly AnyPersonalDataRule[],
  ) {
    this.rules = new Map(rules.map((rule) => [rule.type, rule]));
  }

  /**
   * The sealed data of each event of the page that has plaintext to seal, by its index in the
   * page. `history` is the log as stored, for the rules that place an event written before
   * `keyOf` could (`keyOfWritten`).
   */
  async seal(page: readonly StoredEvent[], history: ShredHistory): Promise<Map<number, Record<string, unknown>>> {
    const wanted: { index: number; rule: AnyPersonalDataRule; keyId: string }[] = [];
    const requests = new Map<string, DataKeyRequest>();
    for (const [index, event] of page.entries()) {
      const rule = this.rules.get(event.type);
      if (!rule) continue;
      let key = keyToSeal(rule, event, event.streamName);
      if (!key && rule.keyOfWritten && isPlaintext(event.data)) key = await rule.keyOfWritten(event as never, event.streamName, history);
      if (!key) continue;
      wanted.push({ index, rule, keyId: key.id });
      const recordedAt = Date.parse(event.recordedAt);
      if (!requests.has(key.id)) requests.set(key.id, { ...key, createdAt: Number.isNaN(recordedAt) ? undefined : recordedAt });
    }
    const sealed = new Map<number, Record<string, unknown>>();
    if (wanted.length === 0) return sealed;
    const keys = await this.keys.keysFor([...requests.values()]);
    for (const { index, rule, keyId } of wanted) {
      sealed.set(index, sealEventData(rule, page[index].data as Record<string, unknown>, keyId, keys.get(keyId)!).data);
    }
    return sealed;
  }
}

/** Data an append would seal: an object whose fields are not sealed yet. */
const isPlaintext = (data: unknown): boolean => typeof data === 'object' && data !== null && (data as Record<string, unknown>)[SEALED_FIELD] === undefined;

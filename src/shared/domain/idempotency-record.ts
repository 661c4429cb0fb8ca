/**
 * The key record of an idempotent request (`Idempotency-Key`), as it travels in the metadata of
 * every event the request appends (`metadata.idempotency`): one append is atomic in every store,
 * so the record of a key is in the log exactly when the change it guards is. The
 * `idempotency_keys` projection folds it; nothing personal is in it (hashes and a time).
 */
export interface IdempotencyRecord {
  /** The key's scope and value, hashed: instance, token subject, route and the key itself. */
  readonly key: string;
  /** A hash of the request it guards (method, path, body): the same key with another request is refused. */
  readonly request: string;
  /** When a retry with this key stops being answered from the record (ISO 8601). */
  readonly expires_at: string;
}

/** The parts of an instance locator `v1:<cluster>:<instanceId>` (the `v1` part is ignored, as the originals do). */
export interface InstanceLocator {
  readonly cluster: string;
  readonly instanceId: string;
}

/** A key `<keyId>:<secret>`, split at the first `:` so the secret may itself contain `:`. */
export interface InstanceKey {
  readonly id: string;
  readonly secret: string;
}

export function parseInstanceLocator(locator: unknown): InstanceLocator {
  const parts = typeof locator === 'string' ? locator.split(':') : [];
  if (parts.length !== 3 || parts.some((part) => part === '')) {
    throw new TypeError(`instanceLocator must look like v1:<cluster>:<instanceId>, got ${JSON.stringify(locator)}`);
  }
  return { cluster: parts[1], instanceId: parts[2] };
}

export function parseKey(key: unknown): InstanceKey {
  const match = typeof key === 'string' ? /^([^:]+):(.+)$/.exec(key) : null;
  if (!match) throw new TypeError('key must look like <keyId>:<secret>');
  return { id: match[1], secret: match[2] };
}

/**
 * Short-lived signals that have no audit value and must never reach the log or the read
 * models: typing indicators and presence. Every API process sees every message published
 * on a channel by any process (in-process for the embedded default; short max-age streams
 * in EventStoreDB for separate API processes).
 */
export interface EphemeralBus {
  publish(channel: string, message: unknown): Promise<void>;
  /** Delivers messages published from now on; returns the unsubscription. */
  subscribe(channel: string, listener: (message: unknown) => void): () => void;
  close(): Promise<void>;
}

export const EPHEMERAL_BUS = Symbol('EphemeralBus');

/** Channel names: `<kind>:<instance>:<id>`. */
export const ephemeralChannel = (kind: 'typing' | 'presence', instanceId: string, id: string) =>
  `${kind}:${instanceId}:${id}`;

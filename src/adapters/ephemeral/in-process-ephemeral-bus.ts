import { EphemeralBus } from '../../shared/ports/ephemeral-bus.port';

/** The embedded default: one process, so a map of listeners is the whole bus. */
export class InProcessEphemeralBus implements EphemeralBus {
  private readonly listeners = new Map<string, Set<(message: unknown) => void>>();

  async publish(channel: string, message: unknown): Promise<void> {
    for (const listener of [...(this.listeners.get(channel) ?? [])]) listener(message);
  }

  subscribe(channel: string, listener: (message: unknown) => void): () => void {
    let set = this.listeners.get(channel);
    if (!set) this.listeners.set(channel, (set = new Set()));
    set.add(listener);
    return () => {
      set!.delete(listener);
      if (set!.size === 0) this.listeners.delete(channel);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}

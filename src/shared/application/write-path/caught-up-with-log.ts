import { DomainError } from '../../domain/errors';
import { EventStore } from '../../ports/event-store.port';
import { ReadYourWrites } from './read-your-writes';

/**
 * For readers of a projection that writes never wait for (`awaitedByReaders`): resolves once
 * the named checkpoints have folded everything the log held when called, so a read shows every
 * write answered before it. A lag past the read-your-writes bound answers 503 `<lagReason>`
 * ("<what> is behind the log").
 */
export async function caughtUpWithLog(
  events: EventStore,
  readYourWrites: ReadYourWrites,
  checkpoints: readonly string[],
  lag: { readonly reason: string; readonly what: string },
): Promise<void> {
  const head = await events.headPosition();
  if (head === null) return;
  try {
    await readYourWrites.waitFor(head, checkpoints);
  } catch (error) {
    if (error instanceof DomainError && error.reason === 'projection_lag') {
      throw new DomainError('unavailable', lag.reason, `${lag.what} is behind the log; retry shortly`);
    }
    throw error;
  }
}

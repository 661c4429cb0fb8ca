import { DomainError } from '../../domain/errors';
import { ReadYourWrites } from './read-your-writes';

/**
 * For readers of projections that writes may leave to them (`RunOptions.readersWait`: a send's
 * answer, in the embedded server, does not wait for the messages read model): resolves once
 * `projections` have folded every write answered so far without waiting for them
 * (`ReadYourWrites.readersCaughtUp`), so a read shows every write answered before it began; at
 * once when no write was left to them. A projection parked short of them is read as it is (as
 * reads of a parked projection always were). One behind past the read-your-writes bound answers
 * 503 projection_lag: the answers of the writes it holds up did not wait for it.
 */
export async function readAfterWrites(readYourWrites: ReadYourWrites, projections: readonly string[]): Promise<void> {
  try {
    await readYourWrites.readersCaughtUp?.(projections);
  } catch (error) {
    if (error instanceof DomainError && error.reason === 'projection_lag') {
      throw new DomainError('unavailable', 'projection_lag', 'The read models are behind the log; retry shortly');
    }
    throw error;
  }
}

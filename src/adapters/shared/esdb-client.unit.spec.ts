import { DeadlineExceededError } from '@eventstore/db-client';
import { EsdbTimeoutError, withTimeout } from './esdb-client';

describe('withTimeout', () => {
  it('says "did not answer" whether its own timer or the call’s gRPC deadline fires first', async () => {
    const deadline = new DeadlineExceededError(new Error('4 DEADLINE_EXCEEDED: Deadline exceeded after 0.401s') as never);
    await expect(withTimeout(Promise.reject(deadline), 400, 'an append to s-1')).rejects.toThrow(
      new EsdbTimeoutError('an append to s-1', 400),
    );
    await expect(withTimeout(new Promise(() => undefined), 20, 'a read of s-1')).rejects.toBeInstanceOf(EsdbTimeoutError);
  });

  it('passes other failures and answers through as they are', async () => {
    const refused = new Error('connection refused');
    await expect(withTimeout(Promise.reject(refused), 400, 'x')).rejects.toBe(refused);
    await expect(withTimeout(Promise.resolve(7), 400, 'x')).resolves.toBe(7);
  });
});

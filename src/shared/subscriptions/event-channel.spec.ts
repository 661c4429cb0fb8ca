import { encodeSharedOnce, queueTurn, QueuedFrames, WireEvent, writeAllQueued } from './event-channel';
import { sleep } from '../../../test/support/waiting';

/** A connection whose write takes `busyMs` of CPU, recording when its turn came. */
const connection = (log: string[], name: string, busyMs = 0): QueuedFrames => ({
  writeQueued() {
    const until = performance.now() + busyMs;
    while (performance.now() < until) {
      /* a write's worth of work */
    }
    log.push(name);
  },
});

describe('queueTurn: connections write in order, a slice per turn of the event loop', () => {
  it('lets work queued behind a long fan-out through between its slices', async () => {
    const log: string[] = [];
    for (let i = 0; i < 200; i++) queueTurn(connection(log, `c${i}`, 0.05)); // about 10 ms of writes
    await new Promise<void>((resolve) => setImmediate(() => (log.push('other work'), resolve())));
    while (log.length < 201) await sleep(5);
    const other = log.indexOf('other work');
    expect(other).toBeGreaterThan(0); // the first slice went before it
    expect(other).toBeLessThan(200); // and it did not wait for the last write
    expect(log.filter((entry) => entry !== 'other work')).toEqual(Array.from({ length: 200 }, (_, i) => `c${i}`));
  });

  it('writes everything queued at once when asked (a drain, before its sockets close)', () => {
    const log: string[] = [];
    for (let i = 0; i < 50; i++) queueTurn(connection(log, `c${i}`));
    writeAllQueued();
    expect(log).toEqual(Array.from({ length: 50 }, (_, i) => `c${i}`));
  });

  it('goes on with the others when one connection throws', () => {
    const log: string[] = [];
    queueTurn(connection(log, 'a'));
    queueTurn({
      writeQueued() {
        throw new Error('socket gone');
      },
    });
    queueTurn(connection(log, 'b'));
    writeAllQueued();
    expect(log).toEqual(['a', 'b']);
  });
});

describe('encodeSharedOnce', () => {
  it('encodes a shared event once for all its subscribers, any other event each time', () => {
    let encodings = 0;
    const encode = encodeSharedOnce((event: WireEvent) => {
      encodings++;
      return Buffer.from(JSON.stringify(event.body));
    });
    const shared: WireEvent = { id: '1', body: { text: 'hi' }, shared: true };
    const first = encode(shared);
    expect(encode(shared)).toBe(first);
    expect(encodings).toBe(1);
    const own: WireEvent = { id: '2', body: { text: 'hi' } };
    encode(own);
    encode(own);
    expect(encodings).toBe(3);
  });
});

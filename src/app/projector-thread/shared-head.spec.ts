import { Worker } from 'node:worker_threads';
import { SharedHead } from './shared-head';
import { eventually } from '../../../test/support/waiting';

describe('SharedHead (the head on disk, from the request thread to the projector thread)', () => {
  it('wakes a follower on another thread at every move, and stops when told', async () => {
    const head = new SharedHead();
    // A thread that follows the head and posts what it sees (as the projector thread does).
    const follower = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const { SharedHead } = require(workerData.module);
       const head = new SharedHead(workerData.buffer);
       const stop = head.follow((through) => parentPort.postMessage(through));
       parentPort.on('message', () => { stop(); parentPort.close(); });
       parentPort.postMessage('following');`,
      { eval: true, workerData: { buffer: head.buffer, module: require.resolve('../../../dist/src/app/projector-thread/shared-head.js') } },
    );
    const seen: unknown[] = [];
    follower.on('message', (m) => seen.push(m));
    await eventually(() => seen.includes('following') || undefined);
    for (const through of [5, 9, 12]) {
      head.moveTo(through);
      await eventually(() => seen.includes(through) || undefined);
    }
    expect(head.through).toBe(12);
    const exited = new Promise((resolve) => follower.once('exit', resolve));
    follower.postMessage('stop');
    await exited;
  });
});

import { erasureCompletedShreds, erasureProgressShreds } from './erasure.personal-data';
import { NO_COUNTS } from './erasure.decider';
import { ErasureProgressed } from './erasure.events';

const requested = { type: 'ErasureRequested', data: { user_id: 'al/ice', user_created_at: '2026-01-01T00:00:00.000Z', requested_by: { key_id: 'k' }, requested_at: 'r' } };
const history = { readStream: async () => [requested] };
const progressed = (step: ErasureProgressed['data']['step']): ErasureProgressed => ({ type: 'ErasureProgressed', data: { step, scanned_to: null, counts: NO_COUNTS, at: 'a' } });
const owner = 'acme/al%2Fice@2026-01-01T00:00:00.000Z';

describe('erasure personal data', () => {
  it("destroys the erased incarnation's key subtree and the keys it owns once the user is erased, and again at completion", async () => {
    expect(await erasureProgressShreds.destroys(progressed('user_erased'), 'erasure-acme.e1', history)).toEqual([{ prefix: `${owner}/` }, { owner }]);
    expect(await erasureCompletedShreds.destroys({ type: 'ErasureCompleted', data: { counts: NO_COUNTS, completed_at: 'c' } }, 'erasure-acme.e1', history)).toEqual([
      { prefix: `${owner}/` },
      { owner },
    ]);
    // The subtree is the incarnation's: another user whose id starts alike, or a later incarnation, is not under it.
    expect('acme/al%2Fice@2026-01-02T00:00:00.000Z/profile'.startsWith(`${owner}/`)).toBe(false);
    expect('acme/al%2Fice2@2026-01-01T00:00:00.000Z/profile'.startsWith(`${owner}/`)).toBe(false);
  });

  it("destroys every version of a page's messages, in one write, before they become tombstones", async () => {
    const page: ErasureProgressed = { type: 'ErasureProgressed', data: { step: 'messages', scanned_to: '7', counts: NO_COUNTS, erasing: [3, 41], at: 'a' } };
    expect(await erasureProgressShreds.destroys(page, 'erasure-acme.e1', history)).toEqual([{ prefixes: ['acme/message/3/', 'acme/message/41/'] }]);
    // Message 4's keys are not under message 41's prefix, nor 3's under 31's.
    expect('acme/message/4/0'.startsWith('acme/message/41/')).toBe(false);
  });

  it('destroys nothing at the other steps, nor for a stream that is not an erasure', async () => {
    expect(await erasureProgressShreds.destroys(progressed('counted'), 'erasure-acme.e1', history)).toEqual([]);
    expect(await erasureProgressShreds.destroys(progressed('messages'), 'erasure-acme.e1', history)).toEqual([]);
    expect(await erasureCompletedShreds.destroys({ type: 'ErasureCompleted', data: { counts: NO_COUNTS, completed_at: 'c' } }, 'user-acme.e1', history)).toEqual([]);
  });
});

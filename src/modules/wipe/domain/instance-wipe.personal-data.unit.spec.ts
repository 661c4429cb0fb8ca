import { instanceWipedShreds } from './instance-wipe.personal-data';

describe('instance wipe personal data', () => {
  it("destroys every key under the instance's prefix, and no other instance's", async () => {
    const selectors = await instanceWipedShreds.destroys({ type: 'InstanceWiped', data: { wiped_at: 'w' } }, 'wipes-acme.log', { readStream: async () => [] });
    expect(selectors).toEqual([{ prefix: 'acme/' }]);
    expect('acme-2/message/1/0'.startsWith('acme/')).toBe(false);
  });
});

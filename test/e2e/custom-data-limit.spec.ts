/**
 * `custom_data` is capped (CUSTOM_DATA_MAX_BYTES, 32 KiB by default): a plain user can no longer
 * write most of a megabyte into the log, which keeps it forever, on themselves or on each new
 * room. Chatkit's own documented 5 KB, what apps written for it send, passes with room to spare.
 */
import { loadConfig } from '../../src/config/config';
import { startTestServer, TestServer } from '../support/test-server';

const KiB = 1024;
/** A JSON object whose JSON text is exactly `bytes` long. */
const customDataOf = (bytes: number) => ({ blob: 'x'.repeat(bytes - '{"blob":""}'.length) });

describe('custom_data size', () => {
  let s: TestServer;
  const as = (sub: string) => s.token({ sub });

  beforeAll(async () => {
    s = await startTestServer();
    expect((await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann' } })).status).toBe(201);
  });
  afterAll(() => s.close());

  const tooLarge = (res: { status: number; body: any }, bytes: number) => {
    expect(res.status).toBe(413);
    expect(res.body).toEqual({
      error: 'services/chatkit/payload_too_large/custom_data_too_large',
      error_description: `custom_data is ${bytes} bytes of JSON; at most ${32 * KiB} are accepted`,
    });
  };

  it('refuses 900 KiB a plain user writes on themselves or on a new room (413), and stores nothing', async () => {
    const huge = customDataOf(900 * KiB);
    tooLarge(await s.request('PUT', s.chat('/users/ann'), { body: { custom_data: huge }, token: as('ann') }), 900 * KiB);
    tooLarge(await s.request('POST', s.chat('/rooms'), { body: { id: 'big', name: 'big', custom_data: huge }, token: as('ann') }), 900 * KiB);
    expect((await s.request('GET', s.chat('/users/ann'))).body.custom_data).toBeUndefined();
    expect((await s.request('GET', s.chat('/rooms/big'))).status).toBe(404);
    // v2 routes share the rule.
    tooLarge(await s.request('POST', s.chat('/rooms', 'v2'), { body: { name: 'big2', custom_data: huge }, token: as('ann') }), 900 * KiB);
  });

  it('refuses one byte over the limit on every write that takes custom_data, batches and updates included', async () => {
    const over = customDataOf(32 * KiB + 1);
    tooLarge(await s.request('POST', s.chat('/users'), { body: { id: 'bob', name: 'Bob', custom_data: over } }), 32 * KiB + 1);
    const batch = await s.request('POST', s.chat('/batch_users'), {
      body: { users: [{ id: 'cat', name: 'Cat' }, { id: 'dan', name: 'Dan', custom_data: over }] },
    });
    tooLarge(batch, 32 * KiB + 1);
    expect((await s.request('GET', s.chat('/users/cat'))).status).toBe(404);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'r1', name: 'r1' }, token: as('ann') })).status).toBe(201);
    tooLarge(await s.request('PUT', s.chat('/rooms/r1'), { body: { custom_data: over } }), 32 * KiB + 1);
    tooLarge(
      await s.request('POST', s.chat('/rooms/r1/attachments'), { body: { content_type: 'text/plain', content_length: 1, custom_data: over }, token: as('ann') }),
      32 * KiB + 1,
    );
  });

  it('takes custom_data up to the limit, Chatkit\'s documented 5 KB far below it', async () => {
    const chatkitSized = customDataOf(5 * 1000);
    expect((await s.request('PUT', s.chat('/users/ann'), { body: { custom_data: chatkitSized }, token: as('ann') })).status).toBe(204);
    expect((await s.request('GET', s.chat('/users/ann'))).body.custom_data).toEqual(chatkitSized);
    const atLimit = customDataOf(32 * KiB);
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'full', name: 'full', custom_data: atLimit }, token: as('ann') })).status).toBe(201);
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users: [{ id: 'eve', name: 'Eve', custom_data: atLimit }] } })).status).toBe(201);
  });
});

describe('CUSTOM_DATA_MAX_BYTES', () => {
  it('sets the limit, 32768 bytes by default, and refuses what is not a size from 2 bytes to the body limit', async () => {
    expect(loadConfig({}).customDataMaxBytes).toBe(32 * KiB);
    expect(() => loadConfig({ CUSTOM_DATA_MAX_BYTES: '2000000' })).toThrow(/^CUSTOM_DATA_MAX_BYTES must be a whole number of bytes from 2 to 1048576/);
    const s = await startTestServer({ env: { CUSTOM_DATA_MAX_BYTES: '100' } });
    try {
      const res = await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann', custom_data: customDataOf(101) } });
      expect(res.status).toBe(413);
      expect(res.body.error_description).toBe('custom_data is 101 bytes of JSON; at most 100 are accepted');
      expect((await s.request('POST', s.chat('/users'), { body: { id: 'ann', name: 'Ann', custom_data: customDataOf(100) } })).status).toBe(201);
    } finally {
      await s.close();
    }
  });
});

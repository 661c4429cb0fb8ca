import { startTestServer, TestServer } from '../support/test-server';

/**
 * A send's 201 no longer waits for the messages read model in the embedded server: its readers
 * wait for it instead (RunOptions.readersWait, readAfterWrites). What users see must not change:
 * whoever reads after a 201 (the sender, or anyone else, at once) finds the message, in a page,
 * by its id, and in the unread counts, while many others send to the same room and to their own.
 */
describe('reads after a send (embedded server, many senders at once)', () => {
  let s: TestServer;
  const SENDERS = 16;
  const ROUNDS = 6;
  const sender = (n: number) => `sender-${n}`;
  beforeAll(async () => {
    s = await startTestServer();
    const users = [...Array.from({ length: SENDERS }, (_, n) => ({ id: sender(n), name: sender(n) })), { id: 'reader', name: 'Reader' }];
    expect((await s.request('POST', s.chat('/batch_users'), { body: { users } })).status).toBe(201);
    const su = s.token({ su: true });
    for (let n = 0; n < SENDERS; n++) {
      expect((await s.request('POST', s.chat('/rooms'), { body: { id: `own-${n}`, name: `own-${n}`, user_ids: [sender(n), 'reader'] }, token: su })).status).toBe(201);
    }
    const everyone = [...Array.from({ length: SENDERS }, (_, n) => sender(n)), 'reader'];
    expect((await s.request('POST', s.chat('/rooms'), { body: { id: 'busy', name: 'busy', user_ids: everyone }, token: su })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('each 201 is followed at once by reads that show the message: by id, in the newest page, in the other member’s unread count', async () => {
    const as = (sub: string) => s.token({ sub });
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: SENDERS }, async (_, n) => {
        for (let round = 1; round <= ROUNDS; round++) {
          for (const room of [`own-${n}`, 'busy']) {
            const text = `${room} ${sender(n)} ${round}`;
            const sent = await s.request('POST', s.chat(`/rooms/${room}/messages`), { body: { parts: [{ type: 'text/plain', content: text }] }, token: as(sender(n)) });
            if (sent.status !== 201) {
              failures.push(`${text}: send answered ${sent.status}`);
              continue;
            }
            const id = sent.body.message_id as number;
            const byId = await s.request('GET', s.chat(`/rooms/${room}/messages/${id}`), { token: as('reader') });
            if (byId.status !== 200 || byId.body.parts?.[0]?.content !== text) failures.push(`${text}: by id ${byId.status}`);
            const page = await s.request('GET', s.chat(`/rooms/${room}/messages?limit=50`, 'v2'), { token: as(sender(n)) });
            if (!(page.body as { id: number; text: string }[]).some((m) => m.id === id && m.text === text)) failures.push(`${text}: not in the page`);
            if (room === `own-${n}`) {
              const rooms = await s.request('GET', s.chat('/users/reader/rooms'), { token: as('reader') });
              const own = (rooms.body as { id: string; unread_count?: number }[]).find((r) => r.id === room);
              if (own?.unread_count !== round) failures.push(`${text}: the reader's unread count ${own?.unread_count}, not ${round}`);
            }
          }
        }
      }),
    );
    expect(failures).toEqual([]);
  }, 60_000);
});

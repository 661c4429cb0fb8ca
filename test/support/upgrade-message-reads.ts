import { UpgradeLab } from './upgrade-lab';

/**
 * What the message-layout upgrade specs read of room r1 (alice and bob its members) to compare
 * a release's answers with the one before's: a v6 call, alice's token, a search's message ids
 * (newest first), and the room's messages, a thread's replies and bob's rooms (unread counts).
 */
export function messageReads(lab: UpgradeLab) {
  const call = (method: string, path: string, options?: { body?: unknown; as?: string }) => lab.call(method, lab.v6(path), options);
  const alice = () => lab.token({ sub: 'alice' });
  const found = async (q: string): Promise<number[]> =>
    ((await call('GET', `/search/messages?q=${encodeURIComponent(q)}`, { as: alice() })).results as { message: { id: number } }[]).map((r) => r.message.id);
  const reads = async (parentId: number) => ({
    messages: await call('GET', '/rooms/r1/messages?limit=100', { as: alice() }),
    replies: await call('GET', `/rooms/r1/messages/${parentId}/replies`, { as: alice() }),
    rooms: await call('GET', '/users/bob/rooms', { as: lab.token({ sub: 'bob' }) }),
  });
  return { call, alice, found, reads };
}
